"use strict";
// The JavaScript bot kit: the bot side of the arena's protocol (docs/protocol.md, version 1)
// for a bot written as one .js file. In a sandbox it is the only arena code next to the
// bot file, run as (arena/match/runtimes.py, the `javascript` runtime):
//
//     node [flags] /kit/botkit.js /bot/mybot.js
//
// A bot is one file with either a function
//
//     function play(observation) { return observation.legal_moves[0]; }
//
// or a class `Bot` whose instance lives for one game (for bots with memory):
//
//     class Bot {
//       start(game) {}            // optional: {game, seat, players, teams, rules}
//       play(observation) {}      // required: return one of observation.legal_moves
//       end(result) {}            // optional: the game's result
//     }
//
// (`module.exports.play = ...` works too, and `const NAME = "mybot"` names the bot.)
// `observation` is the protocol's observation object as is: `legal_moves` are notations
// such as "6-4L", and `play` returns one of them. See docs/writing-a-bot.md.
//
// Node's standard modules are available through `require`; what the bot prints (console.log,
// process.stdout) goes to standard error, never into the protocol.

const fs = require("fs");
const path = require("path");
const readline = require("readline");
const vm = require("vm");

const PROTOCOL_VERSION = 1;

// The protocol's own channel: file descriptor 1, written synchronously, before the bot
// can touch anything. The bot's output goes to standard error. The kit keeps its own
// references to what it writes and reads with: a bot that replaces JSON.stringify,
// JSON.parse or fs.writeSync for itself does not garble its protocol.
const stringify = JSON.stringify;
const parse = JSON.parse;
const writeSync = fs.writeSync;
const writeOut = (message) => writeSync(1, stringify(message) + "\n");
const writeErr = (text) => process.stderr.write(text);
console.log = console.error;
console.info = console.error;
console.debug = console.error;
process.stdout.write = (chunk, ...rest) => process.stderr.write(chunk, ...rest);

class BotError extends Error {}

// "TypeError: x is not a function (line 12)": the line of the bot's own file.
function errorLine(error, file) {
  const text = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  const stack = error instanceof Error && typeof error.stack === "string" ? error.stack : "";
  const escaped = file.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  const found = stack.match(new RegExp(`${escaped}:(\\d+)`));
  return found ? `${text} (line ${found[1]})` : text;
}

function loadBot(file) {
  let source;
  try {
    source = fs.readFileSync(file, "utf8");
  } catch (error) {
    throw new BotError(`${file}: no such file`);
  }
  const exported = { exports: {} };
  const grab =
    "\n;return {play: typeof play === 'function' ? play : undefined," +
    " Bot: typeof Bot === 'function' ? Bot : undefined," +
    " NAME: typeof NAME === 'string' ? NAME : undefined};";
  let found;
  try {
    const factory = vm.compileFunction(source + grab, ["module", "exports", "require"], {
      filename: file,
    });
    found = factory(exported, exported.exports, require);
  } catch (error) {
    throw new BotError(`${file}: failed at load: ${errorLine(error, file)}`);
  }
  const api = exported.exports || {};
  const play = typeof api.play === "function" ? api.play : found.play;
  const Bot = typeof api.Bot === "function" ? api.Bot : found.Bot;
  const name = typeof api.NAME === "string" ? api.NAME : found.NAME;
  if (Bot === undefined && play === undefined) {
    throw new BotError(`${file}: defines neither a function play(observation) nor a class Bot`);
  }
  return { play, Bot, name: (name || path.basename(file, ".js")).slice(0, 64) };
}

function serve(bot, file) {
  const games = new Map(); // game id -> Bot instance (class bots)
  const answer = (game, observation) => {
    try {
      const instance = games.get(game);
      const move = instance !== undefined ? instance.play(observation) : bot.play(observation);
      if (!observation.legal_moves.includes(move)) {
        const shown = stringify(move);
        return {
          error: "illegal",
          message: `play returned ${String(shown).slice(0, 40)}, not one of ${observation.legal_moves.join(" ")}`,
        };
      }
      return move;
    } catch (error) {
      writeErr(`${error && error.stack ? error.stack : error}\n`);
      return { error: "crash", message: errorLine(error, file).slice(0, 500) };
    }
  };
  const input = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
  input.on("line", (line) => {
    const message = parse(line);
    switch (message.type) {
      case "hello":
        writeOut({ type: "hello", protocol: PROTOCOL_VERSION, bot: bot.name });
        break;
      case "start":
        if (bot.Bot !== undefined) {
          try {
            const instance = new bot.Bot();
            games.set(message.game, instance);
            if (typeof instance.start === "function") instance.start(message);
          } catch (error) {
            writeErr(`${error && error.stack ? error.stack : error}\n`);
          }
        }
        break;
      case "act":
        writeOut({
          type: "moves",
          seq: message.seq,
          moves: message.requests.map((r) => answer(r.game, r.observation)),
        });
        break;
      case "end": {
        const instance = games.get(message.game);
        games.delete(message.game);
        if (instance !== undefined && typeof instance.end === "function") {
          try {
            instance.end(message.result);
          } catch (error) {
            writeErr(`${error && error.stack ? error.stack : error}\n`);
          }
        }
        break;
      }
      case "quit":
        process.exit(0);
        break;
      default:
        break;
    }
  });
  input.on("close", () => process.exit(0));
}

function main(args) {
  if (args.length !== 1) {
    writeErr("usage: botkit.js BOT_FILE\n");
    process.exit(2);
  }
  let bot;
  try {
    bot = loadBot(args[0]);
  } catch (error) {
    writeErr(`botkit: ${error instanceof BotError ? error.message : errorLine(error, args[0])}\n`);
    process.exit(3);
  }
  serve(bot, args[0]);
}

main(process.argv.slice(2));
