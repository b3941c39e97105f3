import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config/config.js';
import { tempDir } from '../helpers/test-app.js';

/** The admin OpenAPI document as served by a freshly built app, as the committed file holds it. */
export async function adminOpenApiText(): Promise<string> {
  const dir = tempDir();
  const built = await buildApp(loadConfig({ DATA_DIR: dir.path, LOG_LEVEL: 'silent', SEED_DEMO: 'false' }));
  try {
    const res = await built.app.inject({ url: '/admin/api/openapi.json' });
    return `${JSON.stringify(res.json(), null, 2)}\n`;
  } finally {
    await built.app.close();
    dir.remove();
  }
}
