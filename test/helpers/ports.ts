import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';

/**
 * A port on 127.0.0.1 for a server process a test starts itself (the real service, a cluster).
 *
 * Not one the kernel picks with listen(0): that comes from the ephemeral range, which every
 * outgoing connection of the parallel test files draws its local port from too, so between
 * closing the probe and the child's listen a fetch elsewhere could take it, and the child fails
 * with EADDRINUSE (seen once in CI: test/upstream/secrets.test.ts). The port is drawn at random
 * below the ephemeral range, checked free by binding it, and never handed out twice by this
 * process. Two test files in different workers can still draw the same one; the chance is one in
 * several thousand per pair.
 */
export async function freePort(): Promise<number> {
  const [low, high] = candidateRange();
  for (let attempt = 0; attempt < 200; attempt += 1) {
    const port = low + Math.floor(Math.random() * (high - low + 1));
    if (handedOut.has(port)) continue;
    if (await bindable(port)) {
      handedOut.add(port);
      return port;
    }
  }
  throw new Error(`no free port found between ${low} and ${high}`);
}

const handedOut = new Set<number>();

/** Below the kernel's ephemeral range (Linux: /proc), above the well-known service ports. */
function candidateRange(): [number, number] {
  let ephemeralLow = 32768;
  try {
    const first = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    if (Number.isInteger(first) && first > 0) ephemeralLow = first;
  } catch {
    // Not Linux: the IANA dynamic range starts at 49152; below 32768 is clear of it too.
  }
  const high = Math.min(ephemeralLow - 1, 32767);
  const low = Math.min(20000, high - 1000);
  return [low, high];
}

function bindable(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => {
      resolve(false);
    });
    server.listen(port, '127.0.0.1', () => {
      server.close(() => {
        resolve(true);
      });
    });
  });
}
