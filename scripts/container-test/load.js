// Load for scripts/container-test.sh: JSON lookups from several clients at once until the service
// stops answering (it is being stopped meanwhile), then one line of JSON: every request id that
// was answered 200, and how many requests failed otherwise. Usage: node load.js URL USER KEY.
const [base, user, key] = process.argv.slice(2);
const auth = `Basic ${Buffer.from(`${user}:${key}`).toString('base64')}`;
const CLIENTS = 8;
const answered = [];
const refused = { status: {}, network: 0 };
let firstAnswer;
const started = new Promise((resolve) => { firstAnswer = resolve; });

async function client() {
  // A client stops after its requests are refused several times in a row: the service is gone.
  let failuresInARow = 0;
  while (failuresInARow < 5) {
    try {
      const response = await fetch(`${base}/api/json.aspx/CheckFrance/FK482TR`, { headers: { authorization: auth } });
      await response.arrayBuffer();
      if (response.status === 200) {
        answered.push(response.headers.get('x-request-id'));
        firstAnswer();
        failuresInARow = 0;
      } else {
        refused.status[response.status] = (refused.status[response.status] ?? 0) + 1;
        failuresInARow += 1;
      }
    } catch {
      refused.network += 1;
      failuresInARow += 1;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}

const clients = Array.from({ length: CLIENTS }, () => client());
await started;
// Tells the shell script the load is running; it then sends SIGTERM.
process.stderr.write('load running\n');
await Promise.all(clients);
process.stdout.write(`${JSON.stringify({ answered, refused })}\n`);
