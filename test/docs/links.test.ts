import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * Relative links in README.md and the guides under docs/ lead somewhere: the file or folder exists
 * and, for `file.md#anchor` or `#anchor`, the target has a heading with that anchor (as GitHub
 * makes them). Absolute links (http:, mailto:) are not checked: there is no network here.
 */
const ROOT = fileURLToPath(new URL('../../', import.meta.url));

function markdownFiles(): string[] {
  const docs = readdirSync(join(ROOT, 'docs')).filter((name) => name.endsWith('.md')).map((name) => `docs/${name}`);
  return ['README.md', ...docs];
}

/** Markdown without its fenced code blocks and inline code, where brackets are not links. */
function prose(markdown: string): string {
  return markdown.replace(/^```[\s\S]*?^```/gm, '').replace(/`[^`\n]*`/g, '');
}

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens. */
export function anchorOf(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/ /g, '-');
}

/** The anchors of a markdown file's headings (a repeated heading gets -1, -2... as on GitHub). */
export function anchorsOf(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const anchors = new Set<string>();
  for (const match of markdown.replace(/^```[\s\S]*?^```/gm, '').matchAll(/^#{1,6} (.+)$/gm)) {
    const base = anchorOf(match[1] ?? '');
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    anchors.add(count === 0 ? base : `${base}-${count}`);
  }
  return anchors;
}

/** Every relative link target of a markdown file: `[text](target)` and `![alt](target)`. */
function relativeLinks(markdown: string): string[] {
  return [...prose(markdown).matchAll(/\]\(([^)\s]+)\)/g)].map((m) => m[1] ?? '').filter((target) => !/^[a-z][a-z0-9+.-]*:/i.test(target));
}

function brokenLinks(file: string): string[] {
  const text = readFileSync(join(ROOT, file), 'utf8');
  return relativeLinks(text).flatMap((target) => {
    const [path = '', anchor] = target.split('#', 2);
    const resolved = path === '' ? file : normalize(join(dirname(file), decodeURIComponent(path)));
    if (!existsSync(join(ROOT, resolved))) return [`${target} (no ${resolved})`];
    if (anchor === '') return [`${target} (an empty anchor)`];
    if (anchor === undefined) return [];
    if (statSync(join(ROOT, resolved)).isDirectory() || !resolved.endsWith('.md')) return [`${target} (an anchor into a file that is not markdown)`];
    return anchorsOf(readFileSync(join(ROOT, resolved), 'utf8')).has(anchor) ? [] : [`${target} (no heading "#${anchor}" in ${resolved})`];
  });
}

describe('links in README.md and docs/', () => {
  it('makes anchors as GitHub does', () => {
    expect(anchorOf('SOAP and HTTP GET/POST')).toBe('soap-and-http-getpost');
    expect(anchorOf('Login and API throttles: keys `{prefix}th:...`')).toBe('login-and-api-throttles-keys-prefixth');
    expect([...anchorsOf('# A\n## Tests\n```\n# not a heading\n```\n## Tests\n')]).toEqual(['a', 'tests', 'tests-1']);
  });

  it.each(markdownFiles())('every relative link of %s leads to a file and heading that exist', (file) => {
    expect(brokenLinks(file), `broken links in ${file}`).toEqual([]);
  });
});
