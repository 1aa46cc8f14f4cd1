// The replay viewer: moves between states the server renders (GET .../state?round=&step=&seat=).
// Nothing here knows the rules or draws the board; it only counts steps, fetches a state's
// HTML, swaps it in and keeps the address bar's deep link up to date. Without this script
// every control is a plain link and the page still works.
"use strict";

(() => {
  const viewer = document.getElementById("viewer");
  if (!viewer) {
    return;
  }
  const frames = viewer.dataset.frames.split(",").map(Number); // states per round
  const total = frames.reduce((a, b) => a + b, 0);
  const stateUrl = viewer.dataset.state;
  const slider = viewer.querySelector("[data-slider]");
  const speedSelect = viewer.querySelector("[data-speed]");
  const playButton = viewer.querySelector("button[data-go='play']");
  const marker = viewer.querySelector(".timeline .now");
  const cache = new Map();
  let timer = null;
  let loading = null;

  viewer.querySelector(".player").hidden = false;
  const savedSpeed = sessionStorage.getItem("arena-replay-speed");
  if (savedSpeed && speedSelect.querySelector(`option[value="${savedSpeed}"]`)) {
    speedSelect.value = savedSpeed;
  }

  const state = () => viewer.querySelector("#state");
  // The state last asked for: keys pressed faster than states arrive add up from it.
  let wanted = null;
  const current = () => {
    if (wanted !== null) {
      return wanted;
    }
    const s = state().dataset;
    return { round: Number(s.round), step: Number(s.step), seat: s.seat === "" ? null : Number(s.seat) };
  };
  const indexOf = (round, step) => frames.slice(0, round - 1).reduce((a, b) => a + b, 0) + step;
  const positionOf = (index) => {
    let round = 1;
    let left = Math.min(Math.max(index, 0), total - 1);
    while (left >= frames[round - 1]) {
      left -= frames[round - 1];
      round += 1;
    }
    return { round, step: left };
  };
  const query = (round, step, seat) => {
    const params = new URLSearchParams({ round, step });
    if (seat !== null) {
      params.set("seat", seat);
    }
    return params.toString();
  };
  const fetchState = (round, step, seat) => {
    const key = query(round, step, seat);
    if (!cache.has(key)) {
      cache.set(
        key,
        fetch(`${stateUrl}?${key}`, { headers: { Accept: "text/html" } }).then((response) => {
          if (!response.ok) {
            cache.delete(key);
            throw new Error(`HTTP ${response.status}`);
          }
          return response.text();
        }),
      );
    }
    return cache.get(key);
  };

  async function go(round, step, seat) {
    const index = indexOf(round, step);
    const key = query(round, step, seat);
    loading = key;
    wanted = { round, step, seat };
    let html;
    try {
      html = await fetchState(round, step, seat);
    } catch (error) {
      if (loading === key) {
        wanted = null;
      }
      stop();
      return; // the link still works: the server answers it as a page
    }
    if (loading !== key) {
      return; // a later request won
    }
    wanted = null;
    const focused = document.activeElement && document.activeElement.dataset.view;
    state().outerHTML = html;
    const caption = state().querySelector(".caption");
    const announce = document.getElementById("announce");
    if (caption && announce) {
      announce.textContent = caption.textContent.replace(/\s+/g, " ").trim();
    }
    slider.value = index;
    if (marker) {
      const x = (index * 1000) / Math.max(total - 1, 1);
      marker.setAttribute("x", (x - 3).toFixed(1));
    }
    history.replaceState(null, "", `?${key}`);
    if (focused !== undefined && focused !== null) {
      const again = viewer.querySelector(`[data-view="${focused}"]`);
      if (again) {
        again.focus();
      }
    }
    for (let ahead = 1; ahead <= 3 && index + ahead < total; ahead += 1) {
      const next = positionOf(index + ahead);
      fetchState(next.round, next.step, seat).catch(() => {});
    }
  }

  const goIndex = (index, seat) => {
    const p = positionOf(index);
    return go(p.round, p.step, seat === undefined ? current().seat : seat);
  };
  const step = (delta) => {
    const now = current();
    return goIndex(indexOf(now.round, now.step) + delta);
  };
  const round = (delta) => {
    const now = current();
    const target = Math.min(Math.max(now.round + delta, 1), frames.length);
    return go(target, 0, now.seat);
  };

  function stop() {
    if (timer !== null) {
      clearInterval(timer);
      timer = null;
      playButton.textContent = "Play";
    }
  }
  function play() {
    if (timer !== null) {
      stop();
      return;
    }
    const now = current();
    if (indexOf(now.round, now.step) >= total - 1) {
      goIndex(0);
    }
    playButton.textContent = "Pause";
    timer = setInterval(() => {
      const here = current();
      if (indexOf(here.round, here.step) >= total - 1) {
        stop();
      } else {
        step(1);
      }
    }, 1000 / Number(speedSelect.value));
  }

  viewer.addEventListener("click", (event) => {
    const link = event.target.closest("a[data-go], a[data-step], a[data-view], button[data-go]");
    if (!link || event.button !== 0 || event.ctrlKey || event.metaKey || event.shiftKey) {
      return;
    }
    event.preventDefault();
    const now = current();
    const action = link.dataset.go;
    if (action === "play") {
      play();
    } else if (action === "first") {
      goIndex(0);
    } else if (action === "last") {
      goIndex(total - 1);
    } else if (action === "prev") {
      step(-1);
    } else if (action === "next") {
      step(1);
    } else if (link.dataset.view !== undefined) {
      const view = link.dataset.view === "all" ? null : Number(link.dataset.view);
      go(now.round, now.step, view);
    } else {
      go(Number(link.dataset.round), Number(link.dataset.step), now.seat);
    }
  });

  const timeline = viewer.querySelector("svg.timeline");
  if (timeline) {
    timeline.addEventListener("click", (event) => {
      if (event.target.closest("a")) {
        return;
      }
      const box = timeline.getBoundingClientRect();
      const fraction = (event.clientX - box.left) / box.width;
      goIndex(Math.round(fraction * (total - 1)));
    });
  }

  slider.addEventListener("input", () => {
    stop();
    goIndex(Number(slider.value));
  });
  speedSelect.addEventListener("change", () => {
    sessionStorage.setItem("arena-replay-speed", speedSelect.value);
    if (timer !== null) {
      stop();
      play();
    }
  });

  document.addEventListener("keydown", (event) => {
    const target = event.target;
    if (event.altKey || event.ctrlKey || event.metaKey) {
      return;
    }
    if (target.closest && target.closest("select, textarea, [contenteditable], input:not([type=range])")) {
      return;
    }
    if (target === slider && event.key !== " " && !/^[0-9]$/.test(event.key)) {
      return; // the slider moves itself with the arrows, Home, End and the page keys
    }
    const players = state().querySelectorAll("nav.views a").length - 1;
    const key = event.key;
    let handled = true;
    if (key === "ArrowRight") {
      stop();
      step(1);
    } else if (key === "ArrowLeft") {
      stop();
      step(-1);
    } else if (key === "Home") {
      stop();
      goIndex(0);
    } else if (key === "End") {
      stop();
      goIndex(total - 1);
    } else if (key === "PageDown") {
      stop();
      round(1);
    } else if (key === "PageUp") {
      stop();
      round(-1);
    } else if (key === " ") {
      play();
    } else if (/^[0-9]$/.test(key) && Number(key) <= players) {
      const now = current();
      go(now.round, now.step, key === "0" ? null : Number(key) - 1);
    } else {
      handled = false;
    }
    if (handled) {
      event.preventDefault();
    }
  });
})();
