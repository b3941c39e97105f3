import { numberField, stringField, textField, withoutUndefined, type JsonObject } from '../upstream/json-reader.js';
import type { RegisterStatus } from './israel-registers.js';

/** The CheckIsrael vehicleJson, in the shape of the sample dataset's Israel records. */
export interface IsraelVehicleJson {
  readonly Description: string;
  readonly RegistrationYear?: string;
  readonly CarMake: { readonly CurrentTextValue: string };
  readonly CarModel?: { readonly CurrentTextValue: string };
  readonly MakeDescription: string;
  readonly ModelDescription?: string;
  readonly EngineSize?: { readonly CurrentTextValue: string };
  readonly FuelType?: { readonly CurrentTextValue: string };
  /** The register's colour name, in Hebrew as it gives it. */
  readonly Colour?: string;
  readonly Trim?: string;
  readonly NumberOfSeats?: { readonly CurrentTextValue: number };
  readonly NumberOfDoors?: { readonly CurrentTextValue: string };
  /** Spelt as the public API spells it; separators such as `*` removed. */
  readonly VechileIdentificationNumber?: string;
  readonly EngineCode?: string;
  /** Month first on the road, `YYYY-MM` (or the year alone where the register gives only that). */
  readonly FirstOnRoad?: string;
  readonly LastInspectionDate?: string;
  readonly RegistrationValidUntil?: string;
  /** `Active`, `Inactive` or `Taken off the road`, from the register the plate was found in. */
  readonly RegisterStatus: string;
}

/**
 * Make names as the registers write them (`tozeret_nm`: Hebrew, followed by the country of
 * manufacture, `דאציה רומניה`), to the English names the other countries' answers use. The make
 * code (`tozeret_cd`) is the Ministry's own numbering, published nowhere we could read, so the
 * table is keyed by the name; a name it lacks is given as the register writes it.
 */
export const ISRAEL_MAKES: Readonly<Record<string, string>> = {
  'אאודי': 'AUDI', 'אורה': 'ORA', 'איווקו': 'IVECO', 'איסוזו': 'ISUZU', 'אינפיניטי': 'INFINITI', 'אלפא רומיאו': 'ALFA ROMEO',
  'אם.ג\'י': 'MG', 'אופל': 'OPEL', 'ב.מ.וו': 'BMW', 'במוו': 'BMW', 'בי.ווי.די': 'BYD', 'ביואיק': 'BUICK', 'גילי': 'GEELY',
  'ג\'י.אם.סי': 'GMC', 'ג\'יפ': 'JEEP', 'ג\'נסיס': 'GENESIS', 'דאציה': 'DACIA', 'דאף': 'DAF', 'דודג\'': 'DODGE', 'דוקאטי': 'DUCATI',
  'דייהטסו': 'DAIHATSU', 'הונדה': 'HONDA', 'הארלי דוידסון': 'HARLEY-DAVIDSON', 'וולוו': 'VOLVO', 'טויוטה': 'TOYOTA', 'טסלה': 'TESLA',
  'יגואר': 'JAGUAR', 'יונדאי': 'HYUNDAI', 'ימאהה': 'YAMAHA', 'לינקולן': 'LINCOLN', 'לנד רובר': 'LAND ROVER', 'לקסוס': 'LEXUS',
  'מאזדה': 'MAZDA', 'מאן': 'MAN', 'מיני': 'MINI', 'מיצובישי': 'MITSUBISHI', 'מרצדס': 'MERCEDES-BENZ', 'ניסאן': 'NISSAN',
  'סאנגיונג': 'SSANGYONG', 'סובארו': 'SUBARU', 'סוזוקי': 'SUZUKI', 'סיאט': 'SEAT', 'סיטרואן': 'CITROEN', 'סקודה': 'SKODA',
  'סקניה': 'SCANIA', 'פולקסווגן': 'VOLKSWAGEN', 'פורד': 'FORD', 'פורשה': 'PORSCHE', 'פיאט': 'FIAT', 'פיאג\'ו': 'PIAGGIO',
  'פיג\'ו': 'PEUGEOT', 'צ\'רי': 'CHERY', 'קאדילק': 'CADILLAC', 'קדילאק': 'CADILLAC', 'קוואסאקי': 'KAWASAKI', 'קופרה': 'CUPRA',
  'קיה': 'KIA', 'קרייזלר': 'CHRYSLER', 'רנו': 'RENAULT', 'שברולט': 'CHEVROLET',
};

/** Table names, longest first, so `לנד רובר` wins over a shorter name it starts with. */
const MAKE_NAMES = Object.keys(ISRAEL_MAKES).sort((a, b) => b.length - a.length);

/** The English make of a register's `tozeret_nm`, or the name as given when the table lacks it. */
export function englishMake(registerName: string): string {
  const name = registerName.trim().replace(/\s+/g, ' ');
  const known = MAKE_NAMES.find((hebrew) => name === hebrew || name.startsWith(`${hebrew} `));
  return known === undefined ? name : (ISRAEL_MAKES[known] ?? name);
}

/**
 * `sug_delek_nm` in English (§10.1). The two electric mixes are plug-in hybrids only; ordinary
 * hybrids are registered as petrol.
 */
export const ISRAEL_FUELS: Readonly<Record<string, string>> = {
  'בנזין': 'Petrol',
  'דיזל': 'Diesel',
  'סולר': 'Diesel',
  'גפ"מ': 'LPG',
  'חשמל': 'Electric',
  'חשמל/בנזין': 'Plug-in hybrid (petrol)',
  'חשמל/דיזל': 'Plug-in hybrid (diesel)',
};

const STATUS_WORDS: Readonly<Record<RegisterStatus, string>> = { active: 'Active', inactive: 'Inactive', 'taken-off-the-road': 'Taken off the road' };

/** `2016-3` (month not zero-padded) as `2016-03`; a plain year as it is. */
function monthOnRoad(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  const month = /^(\d{4})-(\d{1,2})$/.exec(value);
  if (month) return `${month[1]}-${month[2]?.padStart(2, '0')}`;
  return /^\d{4}$/.test(value) ? value : undefined;
}

/** A `YYYY-MM-DD` date (the registers' format), else undefined. */
function isoDate(value: string | undefined): string | undefined {
  const date = value?.slice(0, 10);
  return date !== undefined && /^\d{4}-\d{2}-\d{2}$/.test(date) ? date : undefined;
}

/** A whole number above zero, as text, from a field that may be a number or a string. */
function positive(object: JsonObject | undefined, name: string): number | undefined {
  const value = object ? numberField(object, name) : undefined;
  return value !== undefined && value > 0 ? Math.round(value) : undefined;
}

/**
 * Maps a register record (field names folded, israel-registers.ts) and the model catalogue's row
 * to CheckIsrael's vehicleJson (docs/providers.md has the table). Returns undefined when the
 * record has no make.
 */
export function israelVehicleJson(record: JsonObject, model: JsonObject | undefined, status: RegisterStatus): IsraelVehicleJson | undefined {
  const registerMake = stringField(record, 'tozeret_nm');
  if (registerMake === undefined) return undefined;
  const make = englishMake(registerMake);
  const modelName = stringField(record, 'kinuy_mishari') ?? stringField(record, 'degem_nm');
  const fuel = stringField(record, 'sug_delek_nm');
  const year = textField(record, 'shnat_yitzur');
  // The model catalogue spells it nefah_manoa; the motorcycle and heavy registers nefach_manoa.
  const cc = positive(model, 'nefah_manoa') ?? positive(record, 'nefach_manoa') ?? positive(record, 'nefah_manoa');
  const seats = positive(model, 'mispar_moshavim') ?? positive(record, 'mispar_moshavim');
  const doors = positive(model, 'mispar_dlatot');
  const vin = stringField(record, 'misgeret')?.replace(/[^A-Za-z0-9]/g, '').toUpperCase();
  return withoutUndefined<IsraelVehicleJson>({
    Description: modelName === undefined ? make : `${make} ${modelName}`,
    RegistrationYear: year !== undefined && /^\d{4}$/.test(year) ? year : undefined,
    CarMake: { CurrentTextValue: make },
    CarModel: modelName === undefined ? undefined : { CurrentTextValue: modelName },
    MakeDescription: make,
    ModelDescription: modelName,
    EngineSize: cc === undefined ? undefined : { CurrentTextValue: String(cc) },
    FuelType: fuel === undefined ? undefined : { CurrentTextValue: ISRAEL_FUELS[fuel] ?? fuel },
    Colour: stringField(record, 'tzeva_rechev'),
    Trim: stringField(record, 'ramat_gimur'),
    NumberOfSeats: seats === undefined ? undefined : { CurrentTextValue: seats },
    NumberOfDoors: doors === undefined ? undefined : { CurrentTextValue: String(doors) },
    VechileIdentificationNumber: vin === '' ? undefined : vin,
    EngineCode: stringField(record, 'degem_manoa'),
    FirstOnRoad: monthOnRoad(textField(record, 'moed_aliya_lakvish')),
    LastInspectionDate: isoDate(stringField(record, 'mivchan_acharon_dt')),
    RegistrationValidUntil: isoDate(stringField(record, 'tokef_dt')),
    RegisterStatus: STATUS_WORDS[status],
  });
}
