// Says in one line when the suite is started on a Node older than the service supports, rather
// than letting the suites fail one by one in odd ways: `npm test` runs on the Node 24 that `npm ci`
// puts in node_modules/.bin (the devDependency `node`).

const NODE_MAJOR = 22

export default function setup (): void {
  if (Number(process.versions.node.split('.')[0]) < NODE_MAJOR) {
    throw new Error(`the suite needs Node ${NODE_MAJOR} or later (Node 24 LTS in CI) and runs on ${process.version} (${process.execPath}); run \`npm ci\`, then \`npm test\`, whose node_modules/.bin/node is Node 24`)
  }
}
