// Preloaded into Node servers that listen on every interface (express `app.listen(port)`):
// a listen call that names only a port (and maybe a callback) gets the host 127.0.0.1 added.
const net = require("net");
const original = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  const portOnly = typeof args[0] === "number" || typeof args[0] === "string";
  if (portOnly && (args.length === 1 || typeof args[1] === "function")) {
    args.splice(1, 0, "127.0.0.1");
  }
  return original.apply(this, args);
};
