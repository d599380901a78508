// A Chromium CPU profile (CDP `Profiler.stop`) printed for the benches: the functions with the most
// self time, then the inclusive time (each function counted once per sample, however deep it
// recurses) of the top `inclusiveTop`.
export function printProfile(profile, { selfTop = 30, inclusiveTop = 45 } = {}) {
  const dt = profile.timeDeltas ?? [];
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const name = (id) => {
    const f = byId.get(id).callFrame;
    return `${f.functionName || "(anon)"} ${f.url.split("/").pop()}:${f.lineNumber}`;
  };
  const self = new Map();
  const incl = new Map();
  (profile.samples ?? []).forEach((id, i) => {
    const ms = (dt[i] ?? 0) / 1000;
    const own = name(id);
    self.set(own, (self.get(own) ?? 0) + ms);
    const seen = new Set();
    for (let n = id; n !== undefined; n = parent.get(n)) {
      const key = name(n);
      if (seen.has(key)) continue;
      seen.add(key);
      incl.set(key, (incl.get(key) ?? 0) + ms);
    }
  });
  const print = (m, top) => {
    for (const [k, ms] of [...m].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`${ms.toFixed(1).padStart(8)} ms  ${k}`);
  };
  print(self, selfTop);
  console.log("inclusive:");
  print(incl, inclusiveTop);
}
