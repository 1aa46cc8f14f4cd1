// List every file, symlink and directory the sandbox shows a javascript bot (but /proc,
// /dev, /tmp and /sys), as tree.py does for Python: JSON {"paths": [...]} on one line.
const fs = require("fs");
const path = require("path");

const seen = [];
const walk = (dir) => {
  let entries;
  try {
    entries = fs.readdirSync(dir, { withFileTypes: true });
  } catch (error) {
    return;
  }
  for (const entry of entries) {
    const full = path.join(dir, entry.name);
    if (dir === "/" && ["proc", "dev", "tmp", "sys"].includes(entry.name)) continue;
    if (entry.isDirectory()) walk(full);
    else seen.push(full);
  }
};
walk("/");
fs.writeSync(1, JSON.stringify({ paths: seen.sort() }) + "\n");
