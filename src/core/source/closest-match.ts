/** Levenshtein distance, with a cap: returns `cap + 1` as soon as the distance exceeds it. */
export function editDistance(a: string, b: string, cap = Number.POSITIVE_INFINITY): number {
  if (Math.abs(a.length - b.length) > cap) return cap + 1;
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    let best = i;
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      const value = Math.min(prev[j]! + 1, row[j - 1]! + 1, prev[j - 1]! + cost);
      row.push(value);
      if (value < best) best = value;
    }
    if (best > cap) return cap + 1;
    prev = row;
  }
  return prev[b.length]!;
}

/**
 * The candidate a typo most likely meant, for "did you mean …?" hints: the closest by edit
 * distance (case-insensitive), if it is close enough for the word's length; undefined otherwise.
 */
export function closestMatch(word: string, candidates: Iterable<string>): string | undefined {
  const lower = word.toLowerCase();
  const cap = Math.max(1, Math.min(4, Math.floor(word.length / 3)));
  let best: string | undefined;
  let bestDistance = cap + 1;
  for (const candidate of candidates) {
    if (candidate === word) continue;
    const d = editDistance(lower, candidate.toLowerCase(), bestDistance);
    if (d < bestDistance) {
      best = candidate;
      bestDistance = d;
    }
  }
  return best;
}
