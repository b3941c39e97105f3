import type { VinDecode } from './vin-decoding.js';

/**
 * A VinCheck vehicleJson document, in the shape of the original's VinCheck and of our imported
 * VinCheck records (samples/sample-dataset.jsonl): wrapped `{CurrentTextValue}` members,
 * RegistrationYear as a string, and the VIN under its misspelt key (compat-notes "Data shapes").
 * ImageUrl is not set here: the pipeline adds it from CarMake and CarModel.
 */
export type VinVehicleJson = Record<string, string | { CurrentTextValue: string }>;

const text = (value: string): { CurrentTextValue: string } => ({ CurrentTextValue: value });

/** vPIC's body classes, shortened the way the original and the sample data write them. */
const BODY_STYLES: Readonly<Record<string, string>> = {
  'Sedan/Saloon': 'Sedan',
  'Convertible/Cabriolet': 'Convertible',
  'Hatchback/Liftback/Notchback': 'Hatchback',
  'Sport Utility Vehicle (SUV)/Multi-Purpose Vehicle (MPV)': 'SUV',
  'Crossover Utility Vehicle (CUV)': 'Crossover',
  'Sport Utility Truck (SUT)': 'Sport Utility Truck',
  'Low Speed Vehicle (LSV) / Neighborhood Electric Vehicle (NEV)': 'Low Speed Vehicle',
};

const TRANSMISSIONS: Readonly<Record<string, string>> = {
  'Manual/Standard': 'Manual',
  'Continuously Variable Transmission (CVT)': 'CVT',
  'Electronic Continuously Variable (e-CVT)': 'e-CVT',
  'Dual-Clutch Transmission (DCT)': 'Dual-Clutch',
  'Automated Manual Transmission (AMT)': 'Automated Manual',
};

/** Engine layouts as engine codes write them ("L4", "V6", "H4"). */
const LAYOUTS: Readonly<Record<string, string>> = {
  'In-Line': 'L',
  'V-Shaped': 'V',
  'W Shaped': 'W',
  'Horizontally opposed (boxer)': 'H',
};

const SMALL_WORDS = new Set(['and', 'of', 'de', 'del', 'la', 'the']);

/** vPIC writes places in capitals ("FREMONT", "UNITED STATES (USA)"): "Fremont", "United States". */
export function placeName(value: string): string {
  const plain = value.replace(/\s*\([^)]*\)\s*$/, '').trim();
  if (plain !== plain.toUpperCase()) return plain;
  return plain
    .toLowerCase()
    .split(/(\s+|-)/)
    .map((word, i) => (i > 0 && SMALL_WORDS.has(word) ? word : word.charAt(0).toUpperCase() + word.slice(1)))
    .join('');
}

/** "2.0L L4 Turbo", "3.5L V6", "V6", or "Electric" for a battery car; undefined when unknown. */
export function engineSizeText(decode: VinDecode): string | undefined {
  const { displacementLitres, cylinders, configuration, turbo } = decode.engine;
  const parts: string[] = [];
  const litres = displacementLitres === undefined ? Number.NaN : Number(displacementLitres);
  if (Number.isFinite(litres) && litres > 0) parts.push(`${litres.toFixed(1)}L`);
  const layout = configuration === undefined ? undefined : LAYOUTS[configuration];
  if (cylinders !== undefined && /^\d+$/.test(cylinders)) parts.push(layout === undefined ? `${cylinders} cyl` : `${layout}${cylinders}`);
  if (parts.length > 0 && turbo === true) parts.push('Turbo');
  if (parts.length === 0 && decode.fuelPrimary === 'Electric') return 'Electric';
  return parts.length === 0 ? undefined : parts.join(' ');
}

function transmissionText(decode: VinDecode): string | undefined {
  const style = decode.transmissionStyle === undefined ? undefined : (TRANSMISSIONS[decode.transmissionStyle] ?? decode.transmissionStyle);
  if (style === undefined) return undefined;
  return decode.transmissionSpeeds !== undefined && /^\d+$/.test(decode.transmissionSpeeds) ? `${decode.transmissionSpeeds}-speed ${style}` : style;
}

function fuelText(decode: VinDecode): string | undefined {
  const { fuelPrimary, fuelSecondary } = decode;
  if (fuelPrimary === undefined) return undefined;
  return fuelSecondary !== undefined && fuelSecondary !== fuelPrimary ? `${fuelPrimary}/${fuelSecondary}` : fuelPrimary;
}

/** The VinCheck vehicleJson of a decode; members with no value are left out. */
export function vinVehicleJson(decode: VinDecode): VinVehicleJson {
  const doc: VinVehicleJson = {};
  const year = decode.modelYear === undefined ? undefined : String(decode.modelYear);
  // USA/NZ style, as the original's VinCheck: "{year} {Make} {Model}" (compat-notes "Data shapes").
  doc.Description = [year, decode.make, decode.model].filter((p) => p !== undefined).join(' ');
  if (year !== undefined) doc.RegistrationYear = year;
  doc.CarMake = text(decode.make);
  if (decode.model !== undefined) doc.CarModel = text(decode.model);
  doc.MakeDescription = text(decode.make);
  if (decode.model !== undefined) doc.ModelDescription = text(decode.trim === undefined ? decode.model : `${decode.model} ${decode.trim}`);
  const body = decode.bodyClass === undefined ? undefined : (BODY_STYLES[decode.bodyClass] ?? decode.bodyClass);
  if (body !== undefined) doc.BodyStyle = text(body);
  const engine = engineSizeText(decode);
  if (engine !== undefined) doc.EngineSize = text(engine);
  const fuel = fuelText(decode);
  if (fuel !== undefined) doc.FuelType = text(fuel);
  const transmission = transmissionText(decode);
  if (transmission !== undefined) doc.Transmission = text(transmission);
  if (decode.doors !== undefined) doc.NumberOfDoors = text(decode.doors);
  if (decode.driveType !== undefined) doc.DriveType = text(decode.driveType);
  if (decode.engine.model !== undefined) doc.EngineCode = decode.engine.model;
  doc.VechileIdentificationNumber = decode.vin;
  if (decode.manufacturer !== undefined) doc.ManufacturerName = decode.manufacturer;
  doc.PlantCode = decode.plant.code;
  if (decode.plant.city !== undefined) doc.PlantCity = placeName(decode.plant.city);
  if (decode.plant.state !== undefined) doc.PlantState = placeName(decode.plant.state);
  if (decode.plant.country !== undefined) doc.PlantCountry = placeName(decode.plant.country);
  return doc;
}
