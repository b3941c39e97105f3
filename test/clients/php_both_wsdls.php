<?php
// Calls the same operations with PHP SoapClient built once from our bespokeapi ?WSDL and once from
// the vendor's own bespokeapi WSDL (a local copy pointing at the test server); prints, per
// document, what each proxy read, as JSON. An operation it could not read: {"error": "..."}.
// Usage: php php_both_wsdls.php OUR_WSDL_URL VENDOR_WSDL_PATH USERNAME API_KEY SCENARIO_JSON
[, $ours, $vendor, $username, $apiKey, $scenarioJson] = $argv;
$s = json_decode($scenarioJson, true);
$out = [];
foreach (['ours' => $ours, 'vendor' => $vendor] as $name => $wsdl) {
    $client = new SoapClient($wsdl, ['login' => $username, 'password' => $apiKey, 'cache_wsdl' => WSDL_CACHE_NONE, 'exceptions' => true]);
    $calls = [
        'vehicle' => fn () => $client->CheckFrance(['RegistrationNumber' => $s['frenchPlate'], 'username' => $username])->CheckFranceResult->vehicleData,
        'minimal' => fn () => $client->CheckUSAMinimal(['regNumber' => $s['usaPlate'], 'state' => $s['usaState'], 'username' => $username])->CheckUSAMinimalResult->vehicleData,
        'italy' => fn () => $client->CheckInsuranceStatusItaly(['regNumber' => $s['italyPlate'], 'username' => $username])->CheckInsuranceStatusItalyResult,
        'versions' => fn () => $client->CheckAlternativeVersionsFrance(['RegNumber' => $s['versionsPlate']])->CheckAlternativeVersionsFranceResult->versions->FRVersion,
    ];
    foreach ($calls as $op => $call) {
        try {
            $out[$name][$op] = $call();
        } catch (Throwable $e) {
            $out[$name][$op] = ['error' => get_class($e) . ': ' . $e->getMessage()];
        }
    }
}
echo json_encode($out);
