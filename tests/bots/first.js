#!/usr/bin/env node
const readline = require("readline");
const input = readline.createInterface({ input: process.stdin });
const send = (message) => process.stdout.write(JSON.stringify(message) + "\n");
input.on("line", (line) => {
  const message = JSON.parse(line);
  if (message.type === "hello") send({ type: "hello", protocol: 1, bot: "first-js" });
  if (message.type === "act")
    send({ type: "moves", seq: message.seq,
           moves: message.requests.map((r) => r.observation.legal_moves[0]) });
  if (message.type === "quit") process.exit(0);
});
