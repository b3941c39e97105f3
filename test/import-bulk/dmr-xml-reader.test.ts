import { describe, expect, it } from 'vitest';
import { Catalogue } from '../../src/catalogue/catalogue.js';
import { DmrDocumentReader } from '../../src/datasets/import/dmr-register.js';
import { registerTarget } from '../../src/datasets/import/staged-register-importer.js';
import { saxesDmrOutcome, type DmrOutcome } from './dmr-saxes-reference.js';
import { dmrRecord, dmrXml, type DmrVehicle } from './register-fixtures.js';

/**
 * The DMR import's hand-written XML reader against saxes (issue 35): the same documents, cut into
 * chunks at every byte boundary (inside tags, entities, multi-byte characters, CDATA and comments),
 * must give the same records, ranks and documents byte for byte, and every malformed document an
 * error from both.
 */

const { plateRule } = registerTarget(new Catalogue(), 'CheckDenmark');

function fastOutcome(chunks: Iterable<Uint8Array>): DmrOutcome {
  const written: Array<readonly [string, string, string]> = [];
  const reader = new DmrDocumentReader(plateRule, (key, rank, document) => written.push([key, rank, document]));
  try {
    for (const chunk of chunks) reader.write(chunk);
    reader.end();
  } catch (error) {
    return { written, skipped: reader.skipped, records: reader.records, error: error instanceof Error ? error.message : String(error) };
  }
  return { written, skipped: reader.skipped, records: reader.records };
}

/** The document in two chunks, cut after byte `at`. */
const cutAt = (bytes: Buffer, at: number): Buffer[] => [bytes.subarray(0, at), bytes.subarray(at)];
/** The document one byte at a time. */
const byteByByte = (bytes: Buffer): Buffer[] => Array.from({ length: bytes.length }, (_, i) => bytes.subarray(i, i + 1));

/**
 * Both readers on the document whole, byte by byte, and cut in two after every `stride`th byte
 * (every byte for the valid documents): the same outcome, which is `expected`'s kind.
 */
function expectSameEverywhere(xml: string | Buffer, expected: 'valid' | 'malformed', stride = 1): DmrOutcome {
  const bytes = typeof xml === 'string' ? Buffer.from(xml) : xml;
  const whole = saxesDmrOutcome([bytes], plateRule);
  if (expected === 'valid') expect(whole.error, 'saxes reads the document').toBeUndefined();
  else expect(whole.error, 'saxes refuses the document').toBeDefined();
  const compare = (chunks: Buffer[], how: string): void => {
    const fast = fastOutcome(chunks);
    const judge = saxesDmrOutcome(chunks, plateRule);
    expect({ ...fast, error: fast.error !== undefined }, how).toEqual({ ...judge, error: judge.error !== undefined });
  };
  compare([bytes], 'whole');
  compare(byteByByte(bytes), 'byte by byte');
  for (let at = 1; at < bytes.length; at += stride) compare(cutAt(bytes, at), `cut after byte ${at}`);
  return fastOutcome([bytes]);
}

const FERRARI: DmrVehicle = { id: '1007801199310004', plate: 'ZU47209', status: 'Registreret', statusDate: '2009-04-20T23:00:00+01:00', make: 'FERRARI', model: '348', variant: 'TS', vin: 'ZFFKA36B000096243', firstRegistered: '1993-05-03+02:00', cc: '3405.0', fuel: 'Benzin' };
const BMW: DmrVehicle = { id: '1002601198110653', plate: 'ZU47209', status: 'Afmeldt', statusDate: '2021-12-18T00:00:00.000+01:00', make: 'BMW', model: '320', vin: '7729417', firstRegistered: '1981-05-13+02:00', fuel: 'Benzin' };

/** A record with every construct the reader must get right, in the export's namespace. */
const TRICKY_RECORD = `<ns:Statistik>\r
  <!-- a comment with <tags> & ampersands - inside -->
  <ns:KoeretoejIdent>42</ns:KoeretoejIdent >
  <ns:RegistreringNummerNummer>ab&#x31;2&#51;45</ns:RegistreringNummerNummer>
  <ns:KoeretoejOplysningGrundStruktur attr="a > b" other='it&apos;s &lt;"quoted"&gt;'>
    <?processing instruction?>
    <ns:KoeretoejMaerkeTypeNavn>R&amp;D &lt;Æblegrød&gt; &quot;Ø&quot; &apos;å&apos; 😀 &#x1F697; &#233;</ns:KoeretoejMaerkeTypeNavn>
    <ns:Model><ns:KoeretoejModelTypeNavn><![CDATA[M<3 & "]]" ]>]]> tail</ns:KoeretoejModelTypeNavn></ns:Model>
    <ns:Variant><ns:KoeretoejVariantTypeNavn/></ns:Variant>
    <ns:Farve>rød</ns:Farve><ns:Farve>blå</ns:Farve><ns:Andet>x</ns:Andet><ns:Farve>grøn</ns:Farve>
    <ns:Tom></ns:Tom><ns:Tom2 />
    <ns:Linjer>one\r\ntwo\rthree\nfour&#13;five</ns:Linjer>
    <ns:KoeretoejOplysningStelNummer>  VIN  with  spaces  </ns:KoeretoejOplysningStelNummer>
    <Unprefixed>text<![CDATA[ and cdata]]> joined<!-- c --> by a comment</Unprefixed>
  </ns:KoeretoejOplysningGrundStruktur>
  <ns:KoeretoejRegistreringStatus>Registreret</ns:KoeretoejRegistreringStatus>
  <ns:KoeretoejRegistreringStatusDato>not a date</ns:KoeretoejRegistreringStatusDato>
</ns:Statistik>`;

const TRICKY_DOCUMENT = `\uFEFF<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE ns:ESStatistikListeModtag_I SYSTEM "dmr.dtd">
<!-- exported -->
<ns:ESStatistikListeModtag_I xmlns:ns="http://skat.dk/dmr/2007/05/31/" xmlns:x='urn:x'>
<ns:StatistikSamling>
${TRICKY_RECORD}
${dmrRecord({ ...BMW, plate: 'AB 12 345', make: 'VOLVO' })}
<ns:Statistik/>
</ns:StatistikSamling>
</ns:ESStatistikListeModtag_I>
<?trailing pi?>
<!-- trailing comment -->
`;

describe('the DMR XML reader against saxes', () => {
  it('reads the export fixtures the import tests use into the same records at every chunk boundary', () => {
    const outcome = expectSameEverywhere(dmrXml([dmrRecord(FERRARI), dmrRecord(BMW), dmrRecord({ ...BMW, id: '3', plate: undefined }), dmrRecord({ ...BMW, id: '4', plate: 'AB12345', make: undefined })]), 'valid');
    expect(outcome.written.map(([key]) => key)).toEqual(['ZU47209', 'ZU47209']);
    expect(outcome.records).toBe(4);
  });

  it('reads entities, character references, CDATA, comments, processing instructions, attributes, line ends and multi-byte characters as saxes does', () => {
    const outcome = expectSameEverywhere(TRICKY_DOCUMENT, 'valid');
    expect(outcome.records).toBe(3);
    const [tricky] = outcome.written;
    expect(tricky?.[0]).toBe('AB12345');
    const document = JSON.parse(tricky?.[2] ?? '{}') as { CarMake: { CurrentTextValue: string }; CarModel: { CurrentTextValue: string }; ExtendedInformation: Record<string, unknown> };
    expect(document.CarMake.CurrentTextValue).toBe('R&D <Æblegrød> "Ø" \'å\' 😀 🚗 é');
    expect(document.CarModel.CurrentTextValue).toBe('M<3 & "]]" ]> tail');
    const details = document.ExtendedInformation.KoeretoejOplysningGrundStruktur as Record<string, unknown>;
    expect(details.Farve).toEqual(['rød', 'blå', 'grøn']);
    expect(details.Linjer).toBe('one\ntwo\nthree\nfour\rfive');
    expect(details.Unprefixed).toBe('text and cdata joined by a comment');
  });

  it('reads the common members of a record that names their elements twice or with children as the depth-first search does', () => {
    const secondFuel = '<ns:KoeretoejDrivmiddelSamling><ns:DrivmiddelStruktur><ns:DrivkraftTypeStruktur><ns:DrivkraftTypeNavn>El</ns:DrivkraftTypeNavn></ns:DrivkraftTypeStruktur></ns:DrivmiddelStruktur></ns:KoeretoejDrivmiddelSamling>';
    const record = dmrRecord(FERRARI)
      .replace('</ns:KoeretoejDrivmiddelSamlingStruktur>', `${secondFuel}</ns:KoeretoejDrivmiddelSamlingStruktur>`)
      .replace('<ns:KoeretoejOplysningStelNummer>', '<ns:KoeretoejOplysningModelAar><ns:Aar>1993</ns:Aar></ns:KoeretoejOplysningModelAar><ns:KoeretoejOplysningStelNummer>')
      .replace('<ns:Model>', '<ns:Model><ns:KoeretoejMaerkeTypeNavn>FIAT</ns:KoeretoejMaerkeTypeNavn>')
      .replace('<ns:KoeretoejOplysningFoersteRegistreringDato>1993-05-03+02:00', '<ns:KoeretoejOplysningFoersteRegistreringDato>unknown');
    const outcome = expectSameEverywhere(dmrXml([record]), 'valid');
    expect(outcome.written).toHaveLength(1);
    expect(JSON.parse(outcome.written[0]?.[2] ?? '{}')).toMatchObject({ Description: 'FERRARI 348 TS', RegistrationYear: '', FuelType: { CurrentTextValue: 'Benzin' } });
  });

  it('reads Windows line ends and a document without a declaration', () => {
    expectSameEverywhere(dmrXml([dmrRecord(FERRARI)]).replace(/\n/g, '\r\n').replace(/^<\?xml[^>]*>\r\n/, ''), 'valid');
  });

  const record = dmrRecord(FERRARI);
  const malformed: ReadonlyArray<readonly [string, string]> = [
    ['a mismatched end tag', dmrXml([record, record.replace('</ns:KoeretoejIdent>', '</ns:KoeretoejIdnt>')])],
    ['a document cut short', dmrXml([record, record]).slice(0, -60)],
    ['a document cut inside a tag', dmrXml([record]).slice(0, dmrXml([record]).indexOf('<ns:Model>') + 5)],
    ['an unknown entity', dmrXml([record.replace('FERRARI', 'FERR&nbsp;ARI')])],
    ['a bare ampersand', dmrXml([record.replace('FERRARI', 'FERR & ARI')])],
    ['an ampersand with no semicolon', dmrXml([record.replace('FERRARI', 'FERR&amp')])],
    ['a character reference to a forbidden character', dmrXml([record.replace('FERRARI', 'FERR&#1;ARI')])],
    ['a malformed character reference', dmrXml([record.replace('FERRARI', 'FERR&#xZZ;ARI')])],
    ['a forbidden control character', dmrXml([record.replace('FERRARI', 'FERR\u0001ARI')])],
    ['"]]>" in text', dmrXml([record.replace('FERRARI', 'FERR]]>ARI')])],
    ['a "<" in text', dmrXml([record.replace('FERRARI', 'FERR < ARI')])],
    ['a second root element', `${dmrXml([record])}<ns:ESStatistikListeModtag_I/>`],
    ['text after the root', `${dmrXml([record])}trailing`],
    ['text before the root', `junk${dmrXml([record])}`],
    ['an end tag with nothing open', `${dmrXml([record])}</ns:Statistik>`],
    ['an invalid tag name', dmrXml([record.replace('<ns:KoeretoejIdent>', '<1ns:KoeretoejIdent>').replace('</ns:KoeretoejIdent>', '</1ns:KoeretoejIdent>')])],
    ['an attribute without quotes', dmrXml([record.replace('<ns:Model>', '<ns:Model a=1>')])],
    ['an attribute twice', dmrXml([record.replace('<ns:Model>', '<ns:Model a="1" a="2">')])],
    ['a "<" in an attribute', dmrXml([record.replace('<ns:Model>', '<ns:Model a="<">')])],
    ['attributes without space between them', dmrXml([record.replace('<ns:Model>', '<ns:Model a="1"b="2">')])],
    ['an unknown entity in an attribute', dmrXml([record.replace('<ns:Model>', '<ns:Model a="&x;">')])],
    ['"--" in a comment', dmrXml([record.replace('<ns:Model>', '<!-- a -- b --><ns:Model>')])],
    ['a comment ending in "-"', dmrXml([record.replace('<ns:Model>', '<!-- a ---><ns:Model>')])],
    ['an unclosed comment', `${dmrXml([record])}<!-- never closed`],
    ['an unclosed CDATA section', dmrXml([record.replace('FERRARI', '<![CDATA[FERRARI')])],
    ['CDATA outside the root', `${dmrXml([record])}<![CDATA[x]]>`],
    ['an XML declaration not at the start', ` ${dmrXml([record])}`],
    ['a processing instruction named xml', dmrXml([record.replace('<ns:Model>', '<?xml version="1.0"?><ns:Model>')])],
    ['an unknown declaration', dmrXml([record.replace('<ns:Model>', '<!ELEMENT x><ns:Model>')])],
    ['a space after "<"', dmrXml([record.replace('<ns:Model>', '< ns:Model>')])],
    ['the wrong root element', dmrXml([record]).replace(/ESStatistikListeModtag_I/g, 'Other')],
    ['no root element', '<?xml version="1.0"?>\n<!-- nothing -->\n'],
    ['an empty file', ''],
    ['a tag never closed at the end', dmrXml([record]).replace('</ns:ESStatistikListeModtag_I>', '</ns:ESStatistikListeModtag_I')],
  ];
  it.each(malformed)('refuses %s, as saxes does, after the same records', (_, xml) => {
    const outcome = expectSameEverywhere(xml, 'malformed', 7);
    expect(outcome.error).toMatch(/\S/);
  });

  it('names the line of the error and refuses a DOCTYPE with an internal subset', () => {
    const xml = dmrXml([dmrRecord(FERRARI), dmrRecord(BMW).replace('</ns:KoeretoejIdent>', '</ns:KoeretoejIdnt>')]);
    const line = xml.slice(0, xml.indexOf('</ns:KoeretoejIdnt>')).split('\n').length;
    expect(fastOutcome([Buffer.from(xml)])).toMatchObject({ records: 1, error: `line ${line}: </ns:KoeretoejIdnt> where </ns:KoeretoejIdent> was expected` });
    const subset = `<!DOCTYPE x [<!ENTITY e "v">]>${dmrXml([dmrRecord(FERRARI)]).replace(/^<\?xml[^>]*>/, '')}`;
    expect(fastOutcome([Buffer.from(subset)]).error).toMatch(/line 1: a DOCTYPE with an internal subset/);
  });

  it('refuses an unclosed tag without holding the rest of the file', () => {
    const xml = `<ns:ESStatistikListeModtag_I><ns:Statistik a="${'x'.repeat(17 << 20)}`;
    expect(fastOutcome([Buffer.from(xml)]).error).toMatch(/markup longer than 16 MiB/);
  });
});
