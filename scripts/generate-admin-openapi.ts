/**
 * `npx tsx scripts/generate-admin-openapi.ts`: writes docs/admin-openapi.json, the OpenAPI 3.1
 * document of the admin and account APIs, from the route schemas of a freshly built app
 * (test/admin/admin-openapi.test.ts fails when the committed file is stale).
 */
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { adminOpenApiText } from '../test/admin/admin-openapi-source.js';

const target = fileURLToPath(new URL('../docs/admin-openapi.json', import.meta.url));
writeFileSync(target, await adminOpenApiText());
console.log(`wrote ${target}`);
