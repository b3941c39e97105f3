<?php
// PHP SoapClient (Debian's php-cli + php-soap) built from the WSDL we serve: calls one operation
// of every result type and prints what it read as JSON (test/clients/soap-clients.test.ts).
// Usage: php php_client.php BASE_URL USERNAME SCENARIO_JSON
[$script, $base, $username, $scenarioJson] = $argv;
$scenario = json_decode($scenarioJson, true);
$options = ['exceptions' => true, 'cache_wsdl' => WSDL_CACHE_NONE];
$reg = new SoapClient("$base/api/reg.asmx?WSDL", $options);
$bespoke = new SoapClient("$base/api/bespokeapi.asmx?wsdl", $options + ['soap_version' => SOAP_1_2]);
$out = [];

$france = $reg->CheckFrance(['RegistrationNumber' => $scenario['francePlate'], 'username' => $username])->CheckFranceResult;
$out['france'] = [
    'vehicleJson' => json_decode($france->vehicleJson, true),
    'carMake' => $france->vehicleData->CarMake->CurrentTextValue,
    // A wrapper the record has nothing for is absent (compat-notes "Wire differences" 4).
    'hasImmobiliser' => isset($france->vehicleData->Immobiliser),
];

$mot = $reg->UKMOT(['RegistrationNumber' => $scenario['ukPlate'], 'Model' => '', 'username' => $username])->UKMOTResult;
$tests = $mot->Tests->UKTest;
$out['mot'] = ['count' => is_array($tests) ? count($tests) : 1, 'taxDate' => $mot->taxDate ?? null];

$ratings = $bespoke->CheckEuroNCap(['Make' => $scenario['ncapMake'], 'Model' => '', 'username' => $username])->CheckEuroNCapResult->PreAssessmentSearchResult;
$ratings = is_array($ratings) ? $ratings : [$ratings];
$out['ncap'] = array_map(fn ($r) => [
    'Make' => $r->Make,
    'AdultOccupantStars' => $r->AdultOccupantStars,
    'IsPublished' => $r->IsPublished,
    'Year' => $r->Year,
], $ratings);

try {
    $reg->CheckFrance(['RegistrationNumber' => 'ZZ999ZZ', 'username' => $username]);
    $out['notFound'] = null;
} catch (SoapFault $fault) {
    $out['notFound'] = ['message' => $fault->getMessage(), 'code' => $fault->faultcode];
}

echo json_encode($out), "\n";
