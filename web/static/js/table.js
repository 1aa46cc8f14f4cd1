// A table: the state is drawn on the server from the view the worker published for this
// seat; this script only fetches it again (a long poll while others move), sends the moves
// the page offers (a click on a highlighted tile or a move's button, or keys 1-9, L and R),
// and counts the move's clock down. It knows no rule: the legal moves are the page's.
"use strict";

(() => {
  const root = document.getElementById("table");
  if (!root) {
    return;
  }
  const stateUrl = root.dataset.state;
  const moveUrl = root.dataset.move;
  const headers = JSON.parse(document.body.getAttribute("hx-headers") || "{}");
  const announce = document.getElementById("table-announce");
  const over = new Set(["done", "closed", "failed"]);
  let polling = false;
  let busy = false;
  let chosenTile = null;
  let clock = null;

  const state = () => root.querySelector("#table-state");
  const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
  const sameTile = (a, b) => a.split("-").map(Number).sort().join("-") === b.split("-").map(Number).sort().join("-");

  const showError = (text) => {
    const box = state().querySelector(".move-error");
    if (box) {
      box.textContent = text;
      box.hidden = !text;
    }
  };

  const startClock = () => {
    clearInterval(clock);
    const span = state().querySelector(".clock");
    if (!span) {
      return;
    }
    const end = Date.now() + Number(span.dataset.left) * 1000;
    clock = setInterval(() => {
      const left = Math.max(0, Math.round((end - Date.now()) / 1000));
      span.textContent = `${left} s`;
      if (left === 0) {
        clearInterval(clock);
        poll();
      }
    }, 1000);
  };

  const swap = (html) => {
    state().outerHTML = html;
    chosenTile = null;
    const s = state().dataset;
    if (s.mine) {
      announce.textContent = "Your turn.";
    } else if (over.has(s.status)) {
      announce.textContent = "The game is over.";
    }
    startClock();
  };

  async function poll() {
    if (polling) {
      return;
    }
    polling = true;
    try {
      for (;;) {
        const s = state().dataset;
        if (over.has(s.status) || (s.mine && !busy)) {
          return;
        }
        let response;
        try {
          response = await fetch(`${stateUrl}?after=${encodeURIComponent(s.after)}`, {
            headers: { Accept: "text/html" },
          });
        } catch (error) {
          await sleep(2000);
          continue;
        }
        if (!response.ok) {
          await sleep(2000);
          continue;
        }
        const html = await response.text();
        if (!busy) {
          swap(html);
        }
      }
    } finally {
      polling = false;
    }
  }

  async function play(move) {
    if (busy) {
      return;
    }
    busy = true;
    const s = state().dataset;
    state().querySelectorAll("button.move").forEach((button) => {
      button.disabled = true;
    });
    showError("");
    try {
      const body = new URLSearchParams({ move, turn: s.turn, after: s.after });
      const response = await fetch(moveUrl, {
        method: "POST",
        headers: { ...headers, "Content-Type": "application/x-www-form-urlencoded" },
        body,
      });
      const text = await response.text();
      if (response.ok) {
        busy = false;
        swap(text);
      } else {
        state().querySelectorAll("button.move").forEach((button) => {
          button.disabled = false;
        });
        showError(text);
      }
    } catch (error) {
      showError("The move could not be sent: check your connection and try again.");
      state().querySelectorAll("button.move").forEach((button) => {
        button.disabled = false;
      });
    } finally {
      busy = false;
      poll();
    }
  }

  const movesOf = (tile) =>
    [...state().querySelectorAll("button.move")].filter((b) => sameTile(b.dataset.tile, tile));

  const chooseTile = (tile) => {
    const moves = movesOf(tile);
    if (moves.length === 1) {
      play(moves[0].dataset.move);
    } else if (moves.length > 1) {
      chosenTile = tile;
      state().querySelectorAll("button.move").forEach((b) => b.classList.toggle("chosen", moves.includes(b)));
      showError(`${tile} fits both ends: choose left (L) or right (R).`);
      moves[0].focus();
    }
  };

  root.addEventListener("click", (event) => {
    const button = event.target.closest("button.move");
    if (button && !button.disabled) {
      play(button.dataset.move);
      return;
    }
    const tile = event.target.closest("#my-hand g.tile.legal");
    if (tile && state().dataset.mine) {
      chooseTile(tile.dataset.tile);
    }
  });

  document.addEventListener("keydown", (event) => {
    if (event.ctrlKey || event.metaKey || event.altKey || !state().dataset.mine) {
      return;
    }
    if (event.target.closest && event.target.closest("input, select, textarea")) {
      return;
    }
    const buttons = [...state().querySelectorAll("button.move")];
    if (/^[1-9]$/.test(event.key) && buttons[Number(event.key) - 1]) {
      event.preventDefault();
      play(buttons[Number(event.key) - 1].dataset.move);
    } else if (chosenTile && /^[lr]$/i.test(event.key)) {
      const end = event.key.toLowerCase() === "l" ? "left" : "right";
      const button = movesOf(chosenTile).find((b) => b.dataset.end === end);
      if (button) {
        event.preventDefault();
        play(button.dataset.move);
      }
    }
  });

  startClock();
  poll();
})();
