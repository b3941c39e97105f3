import type { ProviderRegistrar } from '../upstream/provider-registrar.js';
import { RegcheckClient } from './regcheck.client.js';
import { RegcheckProvider } from './regcheck.provider.js';

/**
 * The original service (issue 24), registered last so it is the last of every chain: the paid
 * source is asked only when the store and the free public registers do not know the vehicle.
 */
export const regcheckRegistrations: ProviderRegistrar = (context, config, deps) =>
  config.regcheck ? [{ operations: config.regcheck.operations, paid: { provider: new RegcheckProvider(new RegcheckClient(context, config.regcheck, deps.regcheckHooks ?? {}, deps.recordings?.of(config.regcheck.paid.name))), settings: config.regcheck.paid } }] : [];
