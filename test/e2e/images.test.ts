import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { imagePath } from '../../src/results/image-url.js';
import { createTestApp, tempDir, type TestApp } from '../helpers/test-app.js';

let t: TestApp;
let images: { path: string; remove: () => void };
const PNG = Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex');

beforeEach(async () => {
  images = tempDir();
  t = await createTestApp({ IMAGES_DIR: images.path });
});
afterEach(async () => {
  await t.close();
  images.remove();
});

describe('vehicle images', () => {
  it('serves the operator picture named after make and model', async () => {
    writeFileSync(join(images.path, 'ford-fiesta.png'), PNG);
    const res = await t.app.inject({ url: imagePath('Ford Fiesta') });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('image/png');
    expect(res.rawPayload.equals(PNG)).toBe(true);
  });

  it('falls back to a picture of the whole make, also for makes of several words', async () => {
    mkdirSync(images.path, { recursive: true });
    writeFileSync(join(images.path, 'land-rover.jpg'), PNG);
    const res = await t.app.inject({ url: imagePath('Land Rover Defender 110') });
    expect(res.headers['content-type']).toBe('image/jpeg');
  });

  it('generates an SVG card naming make and model, with markup in names escaped', async () => {
    const res = await t.app.inject({ url: imagePath('Citroën <C3> & "co"') });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('image/svg+xml; charset=utf-8');
    expect(res.headers['content-security-policy']).toContain("default-src 'none'");
    expect(res.body).toContain('Citroën');
    expect(res.body).toContain('&lt;C3&gt; &amp; &quot;co&quot;');
    expect(res.body).not.toContain('<C3>');
  });

  it('serves a UK motorbike ImageUrl ("|motorcycle" after the encoded name, sent raw or percent-encoded) as the picture of its make and model', async () => {
    writeFileSync(join(images.path, 'honda-cb500f.png'), PNG);
    for (const suffix of ['|motorcycle', '%7Cmotorcycle']) {
      const res = await t.app.inject({ url: `${imagePath('Honda CB500F')}${suffix}` });
      expect(res.statusCode, suffix).toBe(200);
      expect(res.rawPayload.equals(PNG), suffix).toBe(true);
    }
    expect((await t.app.inject({ url: `${imagePath('Honda CB500F')}|bicycle` })).statusCode).toBe(404);
  });

  it('answers 404 for a path that is not @base64 of a name', async () => {
    for (const bad of ['/image.aspx/Zm9yZA==', '/image.aspx/@', '/image.aspx/@!!!', `/image.aspx/@${Buffer.from([0xff, 0xfe]).toString('base64')}`]) {
      expect((await t.app.inject({ url: bad })).statusCode, bad).toBe(404);
    }
  });

  it('does not read files outside the images directory', async () => {
    const res = await t.app.inject({ url: imagePath('../../etc/passwd') });
    expect(res.headers['content-type']).toBe('image/svg+xml; charset=utf-8');
    expect(res.body).not.toContain('root:');
  });
});
