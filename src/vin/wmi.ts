/**
 * What the first three characters of a VIN (the World Manufacturer Identifier, ISO 3780) tell
 * without any database: the country the WMI was allocated to, and for common makers the make.
 *
 * The NHTSA vPIC database knows the WMIs of vehicles sold in the US; this table covers the makers
 * it lacks or names oddly (Škoda TMB, Dacia UU1, Lada XTA, European-market Mazda JMZ, ...) so a
 * European VIN still says who built it. Sources: public WMI lists (ISO 3780 allocations and
 * makers' published VIN guides). It is a fallback, not an authority: see docs/vin-decoding.md.
 */

/** A known WMI. */
export interface WmiEntry {
  readonly make: string;
  readonly manufacturer: string;
  /**
   * The maker writes the model year at position 10 in every market, not only in North America
   * (Volkswagen group, Volvo, Opel). Makers not marked use position 10 for other things outside
   * North America (Renault, PSA, Fiat, Mercedes-Benz, Ford of Europe, Toyota Europe, ...).
   */
  readonly yearAtPosition10?: true;
}

type Row = readonly [wmi: string, make: string, manufacturer: string, yearAtPosition10?: 'year'];

const ROWS: readonly Row[] = [
  // Germany
  ['WVW', 'Volkswagen', 'Volkswagen AG', 'year'],
  ['WVG', 'Volkswagen', 'Volkswagen AG', 'year'],
  ['WV1', 'Volkswagen', 'Volkswagen Commercial Vehicles', 'year'],
  ['WV2', 'Volkswagen', 'Volkswagen Commercial Vehicles', 'year'],
  ['WAU', 'Audi', 'Audi AG', 'year'],
  ['WA1', 'Audi', 'Audi AG', 'year'],
  ['WUA', 'Audi', 'Audi Sport GmbH', 'year'],
  ['WP0', 'Porsche', 'Dr. Ing. h.c. F. Porsche AG', 'year'],
  ['WP1', 'Porsche', 'Dr. Ing. h.c. F. Porsche AG', 'year'],
  ['WBA', 'BMW', 'BMW AG'],
  ['WBS', 'BMW', 'BMW M GmbH'],
  ['WBY', 'BMW', 'BMW AG'],
  ['WMW', 'MINI', 'BMW AG'],
  ['WAP', 'Alpina', 'Alpina Burkard Bovensiepen GmbH'],
  ['WDB', 'Mercedes-Benz', 'Mercedes-Benz AG'],
  ['WDC', 'Mercedes-Benz', 'Mercedes-Benz AG'],
  ['WDD', 'Mercedes-Benz', 'Mercedes-Benz AG'],
  ['WDF', 'Mercedes-Benz', 'Mercedes-Benz AG'],
  ['W1K', 'Mercedes-Benz', 'Mercedes-Benz AG'],
  ['W1N', 'Mercedes-Benz', 'Mercedes-Benz AG'],
  ['W1V', 'Mercedes-Benz', 'Mercedes-Benz AG'],
  ['WMX', 'Mercedes-AMG', 'Mercedes-AMG GmbH'],
  ['WME', 'smart', 'Mercedes-Benz AG'],
  ['W0L', 'Opel', 'Opel Automobile GmbH', 'year'],
  ['W0V', 'Opel', 'Opel Automobile GmbH'],
  ['WF0', 'Ford', 'Ford-Werke GmbH'],
  ['WMA', 'MAN', 'MAN Truck & Bus'],
  ['WKK', 'Setra', 'EvoBus GmbH'],
  // France
  ['VF1', 'Renault', 'Renault SA'],
  ['VF3', 'Peugeot', 'Automobiles Peugeot'],
  ['VR3', 'Peugeot', 'Automobiles Peugeot'],
  ['VF7', 'Citroën', 'Automobiles Citroën'],
  ['VR7', 'Citroën', 'Automobiles Citroën'],
  ['VR1', 'DS', 'DS Automobiles'],
  ['VF6', 'Renault Trucks', 'Renault Trucks'],
  ['VNK', 'Toyota', 'Toyota Motor Manufacturing France'],
  // Spain
  ['VSS', 'SEAT', 'SEAT SA', 'year'],
  ['VWV', 'Volkswagen', 'Volkswagen Navarra', 'year'],
  ['VS6', 'Ford', 'Ford España'],
  ['VSK', 'Nissan', 'Nissan Motor Ibérica'],
  ['VSX', 'Opel', 'Opel España'],
  // Italy
  ['ZFA', 'Fiat', 'FCA Italy'],
  ['ZFB', 'Fiat', 'FCA Italy'],
  ['ZAC', 'Jeep', 'FCA Italy'],
  ['ZAR', 'Alfa Romeo', 'Alfa Romeo'],
  ['ZLA', 'Lancia', 'Lancia'],
  ['ZAM', 'Maserati', 'Maserati'],
  ['ZFF', 'Ferrari', 'Ferrari SpA'],
  ['ZHW', 'Lamborghini', 'Automobili Lamborghini', 'year'],
  ['ZCF', 'Iveco', 'Iveco'],
  ['ZDM', 'Ducati', 'Ducati Motor Holding'],
  ['ZAP', 'Piaggio', 'Piaggio & C.'],
  ['ZD4', 'Aprilia', 'Aprilia'],
  ['ZGU', 'Moto Guzzi', 'Moto Guzzi'],
  // United Kingdom
  ['SAJ', 'Jaguar', 'Jaguar Land Rover'],
  ['SAD', 'Jaguar', 'Jaguar Land Rover'],
  ['SAL', 'Land Rover', 'Jaguar Land Rover'],
  ['SAR', 'Rover', 'Rover Group'],
  ['SCA', 'Rolls-Royce', 'Rolls-Royce Motor Cars'],
  ['SCB', 'Bentley', 'Bentley Motors', 'year'],
  ['SCC', 'Lotus', 'Lotus Cars'],
  ['SCF', 'Aston Martin', 'Aston Martin Lagonda'],
  ['SB1', 'Toyota', 'Toyota Motor Manufacturing UK'],
  ['SJN', 'Nissan', 'Nissan Motor Manufacturing UK'],
  ['SHH', 'Honda', 'Honda of the UK Manufacturing'],
  ['SHS', 'Honda', 'Honda of the UK Manufacturing'],
  ['SFA', 'Ford', 'Ford Motor Company Ltd'],
  ['SMT', 'Triumph', 'Triumph Motorcycles'],
  // Sweden, Finland
  ['YV1', 'Volvo', 'Volvo Car Corporation', 'year'],
  ['YV4', 'Volvo', 'Volvo Car Corporation', 'year'],
  ['YV2', 'Volvo', 'Volvo Trucks'],
  ['YV3', 'Volvo', 'Volvo Buses'],
  ['YS2', 'Scania', 'Scania AB'],
  ['YS4', 'Scania', 'Scania AB'],
  ['YS3', 'Saab', 'Saab Automobile AB', 'year'],
  ['YK1', 'Saab', 'Valmet Automotive', 'year'],
  // Central and Eastern Europe
  ['TMB', 'Škoda', 'Škoda Auto', 'year'],
  ['TMA', 'Hyundai', 'Hyundai Motor Manufacturing Czech'],
  ['TRU', 'Audi', 'Audi Hungaria', 'year'],
  ['TSM', 'Suzuki', 'Magyar Suzuki'],
  ['UU1', 'Dacia', 'Automobile Dacia'],
  ['U5Y', 'Kia', 'Kia Slovakia'],
  ['U6Y', 'Kia', 'Kia Slovakia'],
  ['SUF', 'Fiat', 'FCA Poland'],
  ['XTA', 'Lada', 'AvtoVAZ'],
  ['XTT', 'UAZ', 'Ulyanovsk Automobile Plant'],
  ['XLR', 'DAF', 'DAF Trucks'],
  // Turkey
  ['NMT', 'Toyota', 'Toyota Motor Manufacturing Turkey'],
  ['NM0', 'Ford', 'Ford Otosan'],
  ['NMB', 'Mercedes-Benz', 'Mercedes-Benz Türk'],
  ['NM4', 'Fiat', 'Tofaş'],
  ['NLH', 'Hyundai', 'Hyundai Assan'],
  // Japan
  ['JHM', 'Honda', 'Honda Motor Co.'],
  ['JHL', 'Honda', 'Honda Motor Co.'],
  ['JH4', 'Acura', 'Honda Motor Co.'],
  ['JN1', 'Nissan', 'Nissan Motor Co.'],
  ['JN8', 'Nissan', 'Nissan Motor Co.'],
  ['JTD', 'Toyota', 'Toyota Motor Corporation'],
  ['JTE', 'Toyota', 'Toyota Motor Corporation'],
  ['JTM', 'Toyota', 'Toyota Motor Corporation'],
  ['JTN', 'Toyota', 'Toyota Motor Corporation'],
  ['JTH', 'Lexus', 'Toyota Motor Corporation'],
  ['JTJ', 'Lexus', 'Toyota Motor Corporation'],
  ['JM1', 'Mazda', 'Mazda Motor Corporation'],
  ['JMZ', 'Mazda', 'Mazda Motor Corporation'],
  ['JF1', 'Subaru', 'Subaru Corporation'],
  ['JF2', 'Subaru', 'Subaru Corporation'],
  ['JS2', 'Suzuki', 'Suzuki Motor Corporation'],
  ['JSA', 'Suzuki', 'Suzuki Motor Corporation'],
  ['JA3', 'Mitsubishi', 'Mitsubishi Motors'],
  ['JA4', 'Mitsubishi', 'Mitsubishi Motors'],
  ['JMB', 'Mitsubishi', 'Mitsubishi Motors'],
  ['JYA', 'Yamaha', 'Yamaha Motor Co.'],
  ['JKA', 'Kawasaki', 'Kawasaki Heavy Industries'],
  // Korea
  ['KMH', 'Hyundai', 'Hyundai Motor Company'],
  ['KMT', 'Genesis', 'Hyundai Motor Company'],
  ['KNA', 'Kia', 'Kia Corporation'],
  ['KND', 'Kia', 'Kia Corporation'],
  ['KNM', 'Renault Samsung', 'Renault Samsung Motors'],
  ['KPT', 'SsangYong', 'SsangYong Motor'],
  ['KL1', 'Chevrolet', 'GM Korea'],
  // China
  ['LRW', 'Tesla', 'Tesla Shanghai'],
  ['LSV', 'Volkswagen', 'SAIC Volkswagen', 'year'],
  ['LFV', 'Volkswagen', 'FAW-Volkswagen', 'year'],
  ['LBV', 'BMW', 'BMW Brilliance'],
  ['LE4', 'Mercedes-Benz', 'Beijing Benz'],
  ['LYV', 'Volvo', 'Volvo Car Asia Pacific', 'year'],
  ['LPS', 'Polestar', 'Polestar Performance AB', 'year'],
  ['LGX', 'BYD', 'BYD Auto'],
  ['LC0', 'BYD', 'BYD Auto'],
  ['L6T', 'Geely', 'Zhejiang Geely'],
  // India, South-East Asia, Oceania, Africa, South America
  ['MA1', 'Mahindra', 'Mahindra & Mahindra'],
  ['MA3', 'Suzuki', 'Maruti Suzuki India'],
  ['MAL', 'Hyundai', 'Hyundai Motor India'],
  ['MAT', 'Tata', 'Tata Motors'],
  ['MNA', 'Ford', 'Ford Thailand'],
  ['MNB', 'Ford', 'Ford Thailand'],
  ['MR0', 'Toyota', 'Toyota Motor Thailand'],
  ['MMB', 'Mitsubishi', 'Mitsubishi Motors Thailand'],
  ['PL1', 'Proton', 'Proton'],
  ['6FP', 'Ford', 'Ford Australia'],
  ['6G1', 'Holden', 'General Motors-Holden'],
  ['6T1', 'Toyota', 'Toyota Motor Corporation Australia'],
  ['AAV', 'Volkswagen', 'Volkswagen of South Africa', 'year'],
  ['AHT', 'Toyota', 'Toyota South Africa'],
  ['9BW', 'Volkswagen', 'Volkswagen do Brasil', 'year'],
  ['9BD', 'Fiat', 'Fiat Automóveis'],
  ['9BG', 'Chevrolet', 'General Motors do Brasil'],
  ['8AW', 'Volkswagen', 'Volkswagen Argentina', 'year'],
  ['8AP', 'Fiat', 'Fiat Argentina'],
  ['8AF', 'Ford', 'Ford Argentina'],
];

const TABLE: ReadonlyMap<string, WmiEntry> = new Map(
  ROWS.map(([wmi, make, manufacturer, year]) => [wmi, year === 'year' ? { make, manufacturer, yearAtPosition10: true } : { make, manufacturer }]),
);

/** The three-character WMI of a VIN. */
export function wmiOf(vin: string): string {
  return vin.slice(0, 3);
}

/** The table's entry for the VIN's WMI, if it has one. */
export function knownWmi(vin: string): WmiEntry | undefined {
  return TABLE.get(wmiOf(vin));
}

/** Number of WMIs in the table (docs and tests). */
export const KNOWN_WMI_COUNT = TABLE.size;

/**
 * ISO 3780 order of the second character within a first character's block: letters without
 * I, O and Q, then 1-9, then 0 ("SA-SM", "TW-T1", "X3-X0" are ranges in this order).
 */
const ORDER = 'ABCDEFGHJKLMNPRSTUVWXYZ1234567890';

/** [first character, second from, second to, country]; first characters alone cover 0-9 and A-0. */
const COUNTRY_RANGES: readonly (readonly [string, string, string, string])[] = [
  ['A', 'A', 'H', 'South Africa'],
  ['J', 'A', '0', 'Japan'],
  ['K', 'F', 'K', 'Israel'],
  ['K', 'L', 'R', 'South Korea'],
  ['L', 'A', '0', 'China'],
  ['M', 'A', 'E', 'India'],
  ['M', 'F', 'K', 'Indonesia'],
  ['M', 'L', 'R', 'Thailand'],
  ['N', 'A', 'E', 'Iran'],
  ['N', 'F', 'K', 'Pakistan'],
  ['N', 'L', 'R', 'Turkey'],
  ['P', 'A', 'E', 'Philippines'],
  ['P', 'F', 'K', 'Singapore'],
  ['P', 'L', 'R', 'Malaysia'],
  ['R', 'F', 'K', 'Taiwan'],
  ['S', 'A', 'M', 'United Kingdom'],
  ['S', 'N', 'T', 'Germany'],
  ['S', 'U', 'Z', 'Poland'],
  ['T', 'A', 'H', 'Switzerland'],
  ['T', 'J', 'P', 'Czech Republic'],
  ['T', 'R', 'V', 'Hungary'],
  ['T', 'W', '1', 'Portugal'],
  ['U', 'H', 'M', 'Denmark'],
  ['U', 'N', 'T', 'Ireland'],
  ['U', 'U', 'X', 'Romania'],
  ['U', '5', '7', 'Slovakia'],
  ['V', 'A', 'E', 'Austria'],
  ['V', 'F', 'R', 'France'],
  ['V', 'S', 'W', 'Spain'],
  ['W', 'A', '0', 'Germany'],
  ['X', 'A', 'E', 'Bulgaria'],
  ['X', 'F', 'K', 'Greece'],
  ['X', 'L', 'R', 'Netherlands'],
  ['X', 'S', 'W', 'Russia'],
  ['X', 'X', '2', 'Luxembourg'],
  ['X', '3', '0', 'Russia'],
  ['Y', 'A', 'E', 'Belgium'],
  ['Y', 'F', 'K', 'Finland'],
  ['Y', 'S', 'W', 'Sweden'],
  ['Y', 'X', '2', 'Norway'],
  ['Y', '6', '0', 'Ukraine'],
  ['Z', 'A', 'R', 'Italy'],
  ['Z', 'X', '2', 'Slovenia'],
  ['1', 'A', '0', 'United States'],
  ['2', 'A', '0', 'Canada'],
  ['3', 'A', 'W', 'Mexico'],
  ['4', 'A', '0', 'United States'],
  ['5', 'A', '0', 'United States'],
  ['6', 'A', 'W', 'Australia'],
  ['7', 'A', 'E', 'New Zealand'],
  ['8', 'A', 'E', 'Argentina'],
  ['8', 'F', 'K', 'Chile'],
  ['9', 'A', 'E', 'Brazil'],
  ['9', 'F', 'K', 'Colombia'],
  ['9', '3', '9', 'Brazil'],
];

/**
 * The country the VIN's WMI was allocated to (ISO 3780): where the manufacturer is registered,
 * which for most makers is the assembly country. Undefined for blocks not listed above.
 */
export function wmiCountry(vin: string): string | undefined {
  const first = vin.charAt(0);
  const second = ORDER.indexOf(vin.charAt(1));
  if (second === -1) return undefined;
  for (const [block, from, to, country] of COUNTRY_RANGES) {
    if (block === first && second >= ORDER.indexOf(from) && second <= ORDER.indexOf(to)) return country;
  }
  return undefined;
}
