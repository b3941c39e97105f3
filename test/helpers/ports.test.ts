import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { once } from 'node:events';
import { describe, expect, it } from 'vitest';
import { freePort } from './ports.js';

describe('freePort (the port a test gives a server process it starts)', () => {
  it('hands out distinct ports below the ephemeral range that a server can listen on', async () => {
    const ephemeralLow = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    const ports = [await freePort(), await freePort(), await freePort()];
    expect(new Set(ports).size).toBe(3);
    for (const port of ports) {
      expect(port).toBeGreaterThanOrEqual(1024);
      expect(port).toBeLessThan(ephemeralLow);
      const server = createServer();
      server.listen(port, '127.0.0.1');
      await once(server, 'listening');
      server.close();
      await once(server, 'close');
    }
  });
});
