import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { cli, json } from '../cli/cli-harness.js';
import { sharedVinDatabase } from './shared-vin-database.js';

let env: Record<string, string>;
beforeAll(async () => {
  env = { VIN_DB_PATH: await sharedVinDatabase() };
});

describe('vehicle-lookup vin', () => {
  it('status --json says whether decoding is on and where the database is', async () => {
    expect(json(await cli(env, ['vin', 'status', '--json']))).toMatchObject({ enabled: true, installed: true, path: env.VIN_DB_PATH });
    const missing = join(env.VIN_DB_PATH ?? '', '..', 'nowhere.sqlite');
    const off = await cli({ VIN_DB_PATH: missing, VIN_DECODER: 'off' }, ['vin', 'status']);
    expect(off.code).toBe(0);
    expect(off.out).toBe(`Offline VIN decoding: off (VIN_DECODER=off)\nDatabase: not installed (${missing}); run \`vehicle-lookup vin install-db\``);
  });

  it('install-db on a current copy reports it and changes nothing', async () => {
    const run = await cli(env, ['vin', 'install-db']);
    expect(run.code).toBe(0);
    expect(run.out).toMatch(/^The VIN database is already installed at .*vpic-corgi-.*\.sqlite \(@cardog\/corgi \d/);
  });

  it('decode prints the VinCheck document, and says which source it came from', async () => {
    const run = await cli(env, ['vin', 'decode', '5yj3e1ea2jf000316']);
    expect(run.code).toBe(0);
    expect(run.out).toContain('Description: 2018 Tesla Model 3');
    expect(run.out).toContain('(decoded from the vPIC patterns)');
    expect(json(await cli(env, ['vin', 'decode', 'TMBJJ7NE0J0123456', '--json']))).toMatchObject({ Description: '2018 Škoda' });
  });

  it('decode refuses invalid VINs and says when no source knows the maker (exit 1)', async () => {
    const invalid = await cli(env, ['vin', 'decode', '5YJ3E1EA7JF000316']);
    expect(invalid.code).toBe(1);
    expect(invalid.err).toMatch(/^vehicle-lookup: Vin check digit is wrong: expected 2 at position 9, found 7/);
    const unknown = await cli(env, ['vin', 'decode', 'ZZZ12345678901234']);
    expect(unknown.code).toBe(1);
    expect(unknown.err).toBe('vehicle-lookup: ZZZ12345678901234: neither the vPIC database nor the WMI table knows this manufacturer');
  });
});
