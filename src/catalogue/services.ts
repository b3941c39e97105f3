import type { ServiceId } from './operation.js';

/** A SOAP service of the original, as generated proxies know it (compat-notes "Namespaces and actions"). */
export interface ServiceDefinition {
  readonly id: ServiceId;
  /** Path under the base URL. */
  readonly path: string;
  /** WSDL service name; ports are `{name}Soap`, `{name}Soap12`, `{name}HttpGet`, `{name}HttpPost`. */
  readonly serviceName: string;
  /** The original's namespace; operators may configure another. */
  readonly defaultNamespace: string;
}

export const SERVICES: Readonly<Record<ServiceId, ServiceDefinition>> = {
  reg: { id: 'reg', path: '/api/reg.asmx', serviceName: 'CarReg', defaultNamespace: 'http://regcheck.org.uk' },
  bespoke: { id: 'bespoke', path: '/api/bespokeapi.asmx', serviceName: 'BespokeAPI', defaultNamespace: 'http://Regcheck.org.uk/' },
};

/**
 * SOAPAction of an operation: the namespace followed by the operation name, with a "/" between
 * them unless the namespace already ends in one (`http://regcheck.org.uk/CheckUSA`,
 * `http://Regcheck.org.uk/CheckEuroNCap`).
 */
export function soapAction(namespace: string, operation: string): string {
  return namespace.endsWith('/') ? `${namespace}${operation}` : `${namespace}/${operation}`;
}
