import type { LookupResult } from '../../results/result-documents.js';
import { codecOf } from '../../results/index.js';
import type { XmlBinding } from '../../results/result-codec.js';
import type { Attributes, XmlWriter } from '../../xml/xml-writer.js';

/**
 * Writes a result element with its content, through the result type's codec: `{Op}Result` in SOAP
 * (no attributes), the root element of the GET/POST answer (its namespace declarations).
 */
export function writeResultElement(w: XmlWriter, element: string, attributes: Attributes, result: LookupResult, binding: XmlBinding): void {
  codecOf(result.type).writeXml(w, element, attributes, result.value, binding);
}

/** The root element of the GET/POST answer: named after the result type (compat-notes "HTTP GET/POST results"). */
export function resultRootName(result: LookupResult): string {
  return codecOf(result.type).xmlName;
}
