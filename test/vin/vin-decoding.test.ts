import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeVin, type VinDecode } from '../../src/providers/vin-offline/vin-decoding.js';
import { engineSizeText, placeName, vinVehicleJson } from '../../src/providers/vin-offline/vin-vehicle.js';
import { VpicDecoder } from '../../src/providers/vin-offline/vpic-decoder.js';
import { sharedVinDatabase } from './shared-vin-database.js';

/** Next year as of the tests' writing; fixed so a year code never changes meaning under a test. */
const LATEST_YEAR = 2027;
let vpic: VpicDecoder;

beforeAll(async () => {
  vpic = VpicDecoder.open(await sharedVinDatabase());
});
afterAll(() => {
  vpic.close();
});

async function decode(vin: string): Promise<VinDecode | undefined> {
  return decodeVin(vin, vpic, LATEST_YEAR);
}

describe('decoding North American-scheme VINs with the bundled vPIC database', () => {
  it('maps the 2003 Honda Accord of the public examples to the VinCheck vehicleJson shape', async () => {
    const decoded = await decode('1HGCM82633A004352');
    expect(decoded?.level).toBe('model');
    expect(vinVehicleJson(decoded as VinDecode)).toEqual({
      Description: '2003 Honda Accord',
      RegistrationYear: '2003',
      CarMake: { CurrentTextValue: 'Honda' },
      CarModel: { CurrentTextValue: 'Accord' },
      MakeDescription: { CurrentTextValue: 'Honda' },
      ModelDescription: { CurrentTextValue: 'Accord EX-V6' },
      BodyStyle: { CurrentTextValue: 'Coupe' },
      EngineSize: { CurrentTextValue: 'V6' },
      FuelType: { CurrentTextValue: 'Gasoline' },
      NumberOfDoors: { CurrentTextValue: '2' },
      EngineCode: 'J30A4',
      VechileIdentificationNumber: '1HGCM82633A004352',
      ManufacturerName: 'AMERICAN HONDA MOTOR CO., INC.',
      PlantCode: 'A',
      PlantCountry: 'United States',
    });
  });

  it('decodes a Tesla Model 3 with its plant (the public example 5YJ3E1EA7JF000316 has a wrong check digit; 2 is right)', async () => {
    const doc = vinVehicleJson((await decode('5YJ3E1EA2JF000316')) as VinDecode);
    expect(doc).toMatchObject({
      Description: '2018 Tesla Model 3',
      RegistrationYear: '2018',
      CarMake: { CurrentTextValue: 'Tesla' },
      CarModel: { CurrentTextValue: 'Model 3' },
      BodyStyle: { CurrentTextValue: 'Sedan' },
      EngineSize: { CurrentTextValue: 'Electric' },
      FuelType: { CurrentTextValue: 'Electric' },
      NumberOfDoors: { CurrentTextValue: '4' },
      PlantCity: 'Fremont',
      PlantState: 'California',
      PlantCountry: 'United States',
      VechileIdentificationNumber: '5YJ3E1EA2JF000316',
    });
  });

  it('decodes US-market BMW and Volkswagen VINs built in Germany and Mexico', async () => {
    expect(vinVehicleJson((await decode('WBA3A5C57CF256651')) as VinDecode)).toMatchObject({
      Description: '2012 BMW 328i',
      BodyStyle: { CurrentTextValue: 'Sedan' },
      EngineSize: { CurrentTextValue: '2.0L 4 cyl' },
      ManufacturerName: 'BMW AG',
      PlantCountry: 'Germany',
    });
    expect(vinVehicleJson((await decode('WVWAB1AJ2CW123456')) as VinDecode)).toMatchObject({ Description: '2012 Volkswagen Golf', PlantCountry: 'Germany' });
    expect(vinVehicleJson((await decode('3VWFE21C04M000001')) as VinDecode)).toMatchObject({
      Description: '2004 Volkswagen Beetle',
      ModelDescription: { CurrentTextValue: 'Beetle Turbo S' },
      ManufacturerName: 'VOLKSWAGEN DE MEXICO SA DE CV',
      PlantCountry: 'Mexico',
    });
  });

  it('writes engine layout, displacement, transmission and plant like the sample records', async () => {
    expect(vinVehicleJson((await decode('1FTFW1ET9DFC10312')) as VinDecode)).toMatchObject({
      Description: '2013 Ford F-150',
      BodyStyle: { CurrentTextValue: 'Pickup' },
      EngineSize: { CurrentTextValue: '3.5L V6' },
      PlantCity: 'Dearborn',
      PlantState: 'Michigan',
    });
    expect(vinVehicleJson((await decode('JTDKN3DU6A0123456')) as VinDecode)).toMatchObject({
      Description: '2010 Toyota Prius',
      FuelType: { CurrentTextValue: 'Gasoline/Electric' },
      EngineSize: { CurrentTextValue: '1.8L L4' },
    });
  });
});

describe('European VINs: what the VIN itself tells', () => {
  it('gives make, manufacturer, country and model year of a Volkswagen with Z fillers, and no model', async () => {
    const decoded = await decode('WVWZZZ1KZ6W000001');
    expect(decoded?.level).toBe('manufacturer');
    expect(vinVehicleJson(decoded as VinDecode)).toEqual({
      Description: '2006 Volkswagen',
      RegistrationYear: '2006',
      CarMake: { CurrentTextValue: 'Volkswagen' },
      MakeDescription: { CurrentTextValue: 'Volkswagen' },
      VechileIdentificationNumber: 'WVWZZZ1KZ6W000001',
      ManufacturerName: 'Volkswagen AG',
      PlantCode: 'W',
      PlantCountry: 'Germany',
    });
  });

  it('knows Škoda, which the vPIC database does not, with its model year', async () => {
    expect(vinVehicleJson((await decode('TMBJJ7NE0J0123456')) as VinDecode)).toMatchObject({
      Description: '2018 Škoda',
      RegistrationYear: '2018',
      ManufacturerName: 'Škoda Auto',
      PlantCountry: 'Czech Republic',
    });
  });

  it('gives no model year for makers that do not write one at position 10 (Renault)', async () => {
    const doc = vinVehicleJson((await decode('VF1RFB00X56123456')) as VinDecode);
    expect(doc.Description).toBe('Renault');
    expect(doc).not.toHaveProperty('RegistrationYear');
    expect(doc.PlantCountry).toBe('France');
  });

  it('falls back to the vPIC registration of a WMI our table lacks', async () => {
    // WMZ (MINI built by BMW) is registered in vPIC; a European VIN with a Z filler is not pattern-decoded.
    const decoded = await decode('WMZZZZ1KZ6W000001');
    expect(decoded).toMatchObject({ level: 'manufacturer', make: 'MINI', manufacturer: 'BMW AG', plant: { country: 'Germany' } });
    expect(decoded?.modelYear).toBeUndefined();
  });

  it('reads position 10 of a VIN with a correct check digit as the North American scheme, even where vPIC has no pattern for it', async () => {
    // A 2014 Range Rover Evoque (a VIN from a public test scenario): its check digit (2) is right,
    // vPIC has no pattern for it, so only the manufacturer is decoded; E at position 10 with a
    // letter at position 7 is 2014 (49 CFR 565.15), not 1984.
    const decoded = await decode('SALVA2AE2EH894156');
    expect(decoded).toMatchObject({ level: 'manufacturer', make: 'Land Rover', modelYear: 2014 });
    expect(vinVehicleJson(decoded as VinDecode)).toMatchObject({ Description: '2014 Land Rover', RegistrationYear: '2014' });
    // The same VIN with another check digit does not follow the scheme for sure: no year.
    expect((await decode('SALVA2AE4EH894156'))?.modelYear).toBeUndefined();
  });

  it('is undefined (not found) when neither vPIC nor the table knows the maker', async () => {
    expect(await decode('ZZZ12345678901234')).toBeUndefined();
    expect(await decode('AAAZZZ1KZ6W000001')).toBeUndefined();
  });
});

describe('vehicleJson formatting', () => {
  const base: VinDecode = { vin: '1HGCM82633A004352', level: 'model', make: 'Honda', engine: {}, plant: { code: 'A' } };

  it('writes engine sizes as engine codes do', () => {
    expect(engineSizeText({ ...base, engine: { displacementLitres: '2.00', cylinders: '4', configuration: 'In-Line', turbo: true } })).toBe('2.0L L4 Turbo');
    expect(engineSizeText({ ...base, engine: { displacementLitres: '2.5', cylinders: '4', configuration: 'Horizontally opposed (boxer)' } })).toBe('2.5L H4');
    expect(engineSizeText({ ...base, engine: { cylinders: '6' } })).toBe('6 cyl');
    expect(engineSizeText({ ...base, fuelPrimary: 'Electric' })).toBe('Electric');
    expect(engineSizeText(base)).toBeUndefined();
  });

  it('writes vPIC place names in capitals the way people do', () => {
    expect(placeName('UNITED STATES (USA)')).toBe('United States');
    expect(placeName('BOSNIA AND HERZEGOVINA')).toBe('Bosnia and Herzegovina');
    expect(placeName('WINSTON-SALEM')).toBe('Winston-Salem');
    expect(placeName('Czech Republic')).toBe('Czech Republic');
  });

  it('leaves out members it has no value for, and never sets ImageUrl (the pipeline does)', () => {
    const doc = vinVehicleJson({ ...base, modelYear: undefined });
    expect(Object.keys(doc)).toEqual(['Description', 'CarMake', 'MakeDescription', 'VechileIdentificationNumber', 'PlantCode']);
    expect(doc.Description).toBe('Honda');
  });
});
