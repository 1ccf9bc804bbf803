// Keyword matching for `matches_keyword` (a STOP rule, a menu of words): `{keywords, mode, threshold}`.
// Text and keywords are compared normalised: lower case, accents dropped, punctuation read as
// spaces, runs of spaces as one, so "Stop!", "stop" and " STÓP " are one word.
//   exact    the whole message is one of the keywords;
//   contains a keyword appears in it as whole words ("stop" in "please stop now", not in "nonstop");
//   fuzzy    some run of the message's words, as many as the keyword has, is at least `threshold`
//            similar to it (1 − edit distance / the longer length; 0.8 by default), so "STOPP" and
//            "unsubscibe" match their keywords.

export interface KeywordMatch {
  keywords: string[];
  mode: 'exact' | 'contains' | 'fuzzy';
  /** Fuzzy only: the least similarity, 0 to 1. */
  threshold?: number;
}

export const DEFAULT_FUZZY_THRESHOLD = 0.8;
const MAX_KEYWORDS = 50;
const MAX_KEYWORD_LENGTH = 100;

export function normalise(text: string): string {
  return text
    .normalize('NFD')
    .replace(/\p{M}/gu, '')
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, ' ')
    .trim();
}

/** The issue with a `matches_keyword` value, or null. */
export function keywordProblems(value: unknown): string | null {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return 'must be {keywords, mode: exact|contains|fuzzy, threshold?} with matches_keyword';
  }
  const v = value as Record<string, unknown>;
  const extra = Object.keys(v).filter((k) => !['keywords', 'mode', 'threshold'].includes(k));
  if (extra.length > 0) return `takes keywords, mode and threshold, not ${extra.join(', ')}`;
  if (
    !Array.isArray(v.keywords) ||
    v.keywords.length === 0 ||
    v.keywords.length > MAX_KEYWORDS ||
    !v.keywords.every(
      (k) => typeof k === 'string' && normalise(k).length > 0 && k.length <= MAX_KEYWORD_LENGTH,
    )
  ) {
    return `keywords must be a list of 1 to ${MAX_KEYWORDS} words or phrases (letters or digits, at most ${MAX_KEYWORD_LENGTH} characters each)`;
  }
  if (v.mode !== 'exact' && v.mode !== 'contains' && v.mode !== 'fuzzy') {
    return 'mode must be exact, contains or fuzzy';
  }
  if (v.threshold !== undefined) {
    if (v.mode !== 'fuzzy') return 'threshold applies to the fuzzy mode only';
    if (typeof v.threshold !== 'number' || !(v.threshold > 0 && v.threshold <= 1)) {
      return 'threshold must be a number above 0 and at most 1';
    }
  }
  return null;
}

/** Edit distance (insertions, deletions, substitutions), in O(|a|·|b|) with two rows. */
export function levenshtein(a: string, b: string): number {
  if (a === b) return 0;
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      current[j] = Math.min(
        previous[j]! + 1,
        current[j - 1]! + 1,
        previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1),
      );
    }
    previous = current;
  }
  return previous[b.length]!;
}

export function similarity(a: string, b: string): number {
  const longer = Math.max(a.length, b.length);
  return longer === 0 ? 1 : 1 - levenshtein(a, b) / longer;
}

export function matchesKeyword(text: string, match: KeywordMatch): boolean {
  const message = normalise(text);
  if (message.length === 0) return false;
  const words = message.split(' ');
  const threshold = match.threshold ?? DEFAULT_FUZZY_THRESHOLD;
  return match.keywords.some((raw) => {
    const keyword = normalise(raw);
    if (match.mode === 'exact') return message === keyword;
    if (match.mode === 'contains') return ` ${message} `.includes(` ${keyword} `);
    const size = keyword.split(' ').length;
    for (let i = 0; i + size <= words.length; i++) {
      if (similarity(words.slice(i, i + size).join(' '), keyword) >= threshold) return true;
    }
    return false;
  });
}
