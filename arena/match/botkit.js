"use strict";
// The JavaScript bot kit: the bot side of the arena's protocol (docs/protocol.md, version 3,
// as arena/match/botkit.py speaks it) for a bot written as one .js file. In a sandbox it is
// the only arena code next to the bot file, run as (arena/match/runtimes.py, the
// `javascript` runtime):
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
// `observation` is the protocol's version 1 observation object (docs/protocol.md, "The
// observation"): `legal_moves` are notations such as "6-4L", and `play` returns one of
// them. Over version 3 the referee sends only each game's new events, and the kit folds
// them into the round's state (GameView below), so the bot sees the same object.
// See docs/writing-a-bot.md.
//
// Node's standard modules are available through `require`; what the bot prints (console.log,
// process.stdout) goes to standard error, never into the protocol.

const fs = require("fs");
const path = require("path");
const readline = require("readline");
const vm = require("vm");

const PROTOCOL_VERSION = 3;

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

// Output written synchronously, as a Python bot's is: a write waits until the pipe takes
// it. Node's default for a pipe is to queue, in memory and without bound, what the pipe
// does not take at once; when the referee stops reading a flooding bot's stderr (past the
// match's cap, docs/protocol.md "Time, and faults"), such a bot went on playing and
// queueing until V8 ran out of memory: a crash, where a Python bot blocks on its full pipe
// and gets the flood verdict. (Node makes its stdio pipes blocking on Windows only;
// `setBlocking` is libuv's uv_stream_set_blocking on the stream's handle.)
for (const stream of [process.stderr, process.stdout]) {
  if (stream._handle && typeof stream._handle.setBlocking === "function") {
    stream._handle.setBlocking(true);
  }
}

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

// --- a game as the bot has seen it (protocols 2 and 3) ------------------------------------

// "6-4" -> [6, 4], high half first (either order in the notation).
function parseTile(text) {
  const parts = text.split("-");
  const a = Number(parts[0]);
  const b = Number(parts[1]);
  if (parts.length !== 2 || !Number.isInteger(a) || !Number.isInteger(b) || a < 0 || b < 0) {
    throw new Error(`not a tile: ${stringify(text)}`);
  }
  return a >= b ? [a, b] : [b, a];
}

// Tiles in the observation's order: by high half, then low half.
const byTile = (x, y) => x[0] - y[0] || x[1] - y[1];

// An event's notation (protocol 3) as the observation's history holds it: "play 0 6-4L"
// (with points after it when a muggins play scored), "draw 1" or "draw 1 6-4", "pass 0".
function parseEvent(text) {
  const parts = String(text).split(" ");
  const seat = parts.length > 1 && /^[0-9]+$/.test(parts[1]) ? Number(parts[1]) : -1;
  if (seat >= 0 && parts[0] === "play" && (parts.length === 3 || parts.length === 4)) {
    const event = { type: "play", seat, move: parts[2] };
    if (parts.length === 4 && /^[0-9]+$/.test(parts[3])) {
      if (Number(parts[3]) > 0) event.points = Number(parts[3]);
      return event;
    }
    if (parts.length === 3) return event;
  } else if (seat >= 0 && parts[0] === "draw" && (parts.length === 2 || parts.length === 3)) {
    if (parts.length === 3) parseTile(parts[2]);
    return { type: "draw", seat, tile: parts.length === 3 ? parts[2] : null };
  } else if (seat >= 0 && parts[0] === "pass" && parts.length === 2) {
    return { type: "pass", seat };
  }
  throw new Error(`not an event: ${stringify(text)}`);
}

// One game as this bot has seen it: its start (seat, players, teams, rules); over protocol 2
// the round's history so far, to which each request's new events are added; over protocol 3
// also the round's state, kept up to date by folding in each new event. Either way `play`
// gets the version 1 observation (docs/protocol.md), a fresh object at every request.
class GameView {
  constructor(start) {
    this.seat = start.seat;
    this.players = start.players;
    this.teams = start.teams;
    this.rules = start.rules;
    this.round = -1;
    this.history = [];
    this.leader = 0;
    this.hand = []; // [high, low] pairs, in order
    this.line = []; // [left half, right half] pairs, left to right
    this.left = -1;
    this.right = -1;
    this.sizes = [];
    this.boneyard = 0;
    this.drawable = 0;
    this.scores = [];
  }

  // Protocol 2: the observation a delta stands for.
  observe(delta) {
    if (delta.round !== this.round || delta.history_from === 0) {
      this.round = delta.round;
      this.history = [];
    }
    if (delta.history_from !== this.history.length) {
      throw new Error(`history_from ${delta.history_from}, but ${this.history.length} events seen`);
    }
    for (const event of delta.events) this.history.push(event);
    const observation = { ...delta, rules: this.rules, history: this.history.map(copy) };
    delete observation.history_from;
    delete observation.events;
    return observation;
  }

  // Protocol 3: a new round's state (`round`) if there is one, then each new event folded in.
  fold(request) {
    if (request.round !== undefined) this.begin(request.round);
    for (const text of request.events) {
      const event = parseEvent(text);
      if (event.type === "play") this.play(event);
      else if (event.type === "draw") this.draw(event);
      this.history.push(event);
    }
    return {
      seat: this.seat,
      players: this.players,
      teams: this.teams,
      rules: this.rules,
      round: this.round,
      leader: this.leader,
      to_move: this.seat,
      hand: this.hand.map(([a, b]) => `${a}-${b}`),
      line: this.line.map(([a, b]) => [a, b]),
      ends: this.left < 0 ? null : [this.left, this.right],
      hand_sizes: this.sizes.slice(),
      boneyard_size: this.boneyard,
      drawable: this.drawable,
      scores: this.scores.slice(),
      history: this.history.map(copy),
      legal_moves: request.legal_moves.slice(),
    };
  }

  begin(start) {
    this.round = start.number;
    this.leader = start.leader;
    this.hand = start.hand.map(parseTile).sort(byTile);
    this.sizes = start.hand_sizes.slice();
    this.boneyard = start.boneyard_size;
    this.drawable = start.drawable;
    this.scores = start.scores.slice();
    this.line = [];
    this.left = this.right = -1;
    this.history = [];
  }

  play(event) {
    const text = event.move;
    const end = text.endsWith("L") ? "L" : text.endsWith("R") ? "R" : null;
    const [high, low] = parseTile(end === null ? text : text.slice(0, -1));
    if (end === null) {
      this.left = high;
      this.right = low;
      this.line.push([high, low]);
    } else {
      const old = end === "L" ? this.left : this.right;
      if (high !== old && low !== old) throw new Error(`${text} does not match the end ${old}`);
      const other = high === old ? low : high;
      if (end === "L") {
        this.left = other;
        this.line.unshift([other, old]);
      } else {
        this.right = other;
        this.line.push([old, other]);
      }
    }
    this.sizes[event.seat] -= 1;
    if (event.seat === this.seat) {
      const at = this.hand.findIndex(([a, b]) => a === high && b === low);
      if (at < 0) throw new Error(`${text}: seat ${this.seat} does not hold ${high}-${low}`);
      this.hand.splice(at, 1);
    }
    if (event.points) this.scores[this.teams ? event.seat % 2 : event.seat] += event.points;
  }

  draw(event) {
    this.sizes[event.seat] += 1;
    this.boneyard -= 1;
    this.drawable -= 1;
    if (event.seat === this.seat && event.tile !== null) {
      const tile = parseTile(event.tile);
      const at = this.hand.findIndex((held) => byTile(held, tile) > 0);
      this.hand.splice(at < 0 ? this.hand.length : at, 0, tile);
    }
  }
}

const copy = (event) => ({ ...event });

// The observation a request stands for, whichever protocol it came in.
function observationOf(request, views) {
  if (request.events !== undefined) return views.get(request.game).fold(request);
  if (request.delta !== undefined) return views.get(request.game).observe(request.delta);
  return request.observation;
}

// --- the protocol loop --------------------------------------------------------------------

function serve(bot, file) {
  const games = new Map(); // game id -> Bot instance (class bots)
  const views = new Map(); // game id -> GameView
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
      case "hello": {
        // The newest version both speak: an older referee (max_protocol 2, or none) is
        // never answered 3.
        const offered = message.max_protocol ?? message.protocol ?? 1;
        const protocol = Number.isInteger(offered)
          ? Math.max(1, Math.min(offered, PROTOCOL_VERSION))
          : 1;
        writeOut({ type: "hello", protocol, bot: bot.name });
        break;
      }
      case "start":
        views.set(message.game, new GameView(message));
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
          moves: message.requests.map((r) => answer(r.game, observationOf(r, views))),
        });
        break;
      case "end": {
        const instance = games.get(message.game);
        games.delete(message.game);
        views.delete(message.game);
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
