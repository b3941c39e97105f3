<?php
// PHP SoapClient (Debian's php-cli + php-soap) built from the WSDL we serve: calls one operation of
// every record type of the original and prints the typed values it read as JSON
// (test/clients/record-types-clients.test.ts). Operations without a username send HTTP Basic.
// Usage: php php_records.php BASE_URL USERNAME API_KEY SCENARIO_JSON
[$script, $base, $username, $apiKey, $scenarioJson] = $argv;
$s = json_decode($scenarioJson, true);
$options = ['exceptions' => true, 'cache_wsdl' => WSDL_CACHE_NONE, 'login' => $username, 'password' => $apiKey];
$reg = new SoapClient("$base/api/reg.asmx?WSDL", $options);
$bespoke = new SoapClient("$base/api/bespokeapi.asmx?wsdl", $options);
$bespoke12 = new SoapClient("$base/api/bespokeapi.asmx?wsdl", $options + ['soap_version' => SOAP_1_2]);
$out = [];

$price = $bespoke->CheckPrice(['RegistrationNumber' => $s['pricePlate'], 'mileage' => 42000, 'username' => $username])->CheckPriceResult;
$out['valuation'] = ['Description' => $price->Description, 'Price' => $price->Price];

$insured = $bespoke12->IsInsured(['regNumber' => $s['insuredPlate'], 'username' => $username])->IsInsuredResult;
$out['insured'] = ['Insured' => $insured->Insured, 'VehicleDetails' => $insured->VehicleDetails];

$italy = $bespoke->CheckInsuranceStatusItaly(['regNumber' => $s['italyPlate'], 'username' => $username])->CheckInsuranceStatusItalyResult;
$out['italy'] = ['Expiry' => $italy->Expiry, 'IsInsured' => $italy->IsInsured, 'Region' => $italy->Region];

$portugal = $bespoke->CheckInsuranceStatusPortugal(['regNumber' => $s['portugalPlate'], 'username' => $username])->CheckInsuranceStatusPortugalResult;
$out['portugal'] = ['StartDate' => $portugal->StartDate, 'Policy' => $portugal->Policy];

$pairs = $bespoke->CheckStolen(['vinNumber' => $s['stolenVin']])->CheckStolenResult->NameValue;
$pairs = is_array($pairs) ? $pairs : [$pairs];
$out['stolen'] = array_map(fn ($p) => ['Name' => $p->Name, 'Value' => $p->Value], $pairs);

$out['recall'] = $bespoke12->CheckRecalledVIN(['vin' => $s['recallVin']])->CheckRecalledVINResult;

$versions = $bespoke->CheckAlternativeVersionsFrance(['RegNumber' => $s['frenchPlate']])->CheckAlternativeVersionsFranceResult->versions->FRVersion;
$versions = is_array($versions) ? $versions : [$versions];
$out['french'] = array_map(fn ($v) => ['marque' => $v->marque, 'libVersion' => $v->libVersion], $versions);

$irish = $bespoke->CheckIrishTaxi(['regNumber' => $s['irishPlate']])->CheckIrishTaxiResult;
$out['irish'] = ['LicenceNumber' => $irish->LicenceNumber, 'LicenceHolder' => $irish->LicenceHolder];

$london = $bespoke->CheckLondonTaxi(['regNumber' => $s['londonPlate']])->CheckLondonTaxiResult;
$out['london'] = ['Make' => $london->Make, 'License' => $london->License];

$grid = $reg->CarSpecifications(['make' => $s['make'], 'model' => $s['model'], 'year' => (int) $s['year']])->CarSpecificationsResult;
$rows = is_array($grid->data->ArrayOfString) ? $grid->data->ArrayOfString : [$grid->data->ArrayOfString];
$out['grid'] = ['columnNames' => $grid->columnNames->string, 'rows' => count($rows), 'first' => $rows[0]->string];

$out['wheels'] = $reg->WheelSize(['make' => $s['wheelMake'], 'model' => $s['wheelModel'], 'year' => (int) $s['wheelYear']])->WheelSizeResult;

try {
    (new SoapClient("$base/api/bespokeapi.asmx?wsdl", ['exceptions' => true, 'cache_wsdl' => WSDL_CACHE_NONE]))->CheckStolen(['vinNumber' => $s['stolenVin']]);
    $out['anonymous'] = null;
} catch (SoapFault $fault) {
    $out['anonymous'] = ['message' => $fault->getMessage(), 'code' => $fault->faultcode];
}

echo json_encode($out), "\n";
