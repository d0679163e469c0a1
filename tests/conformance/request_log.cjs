// Preloaded into the conformance harness (node --require) by tests/conformance/harness.py.
//
// Records every HTTP request that reaches any server the harness starts (the mock MCP server, the
// mock authorization server, ...) as one JSON line in the file named by
// MCPSYNC_CONFORMANCE_REQUEST_LOG. The harness itself never calls its own mock servers, so an empty
// log means the client under test sent nothing: harness.py fails such a scenario even when the
// harness's own checks pass (a few scenarios pass a client that does nothing at all).
'use strict';

const fs = require('fs');
const http = require('http');

const logPath = process.env.MCPSYNC_CONFORMANCE_REQUEST_LOG;
if (logPath) {
  const originalEmit = http.Server.prototype.emit;
  http.Server.prototype.emit = function emit(event, ...args) {
    if (event === 'request') {
      const req = args[0];
      try {
        const line = JSON.stringify({
          method: req.method,
          url: req.url,
          userAgent: req.headers['user-agent'] || '',
          port: this.address() && this.address().port
        });
        fs.appendFileSync(logPath, line + '\n');
      } catch (err) {
        // Never break the harness over bookkeeping; harness.py sees a missing log as no requests.
      }
    }
    return originalEmit.call(this, event, ...args);
  };
}
