// Preloaded (node --import) into a server that listens on every interface on $PORT:
// it listens on loopback only instead, and says where, once it does, on stderr:
// "loopback listening at http://127.0.0.1:PORT" (PORT=0 picks a free port).
import net from "node:net";

const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  const portOnly = ["number", "string"].includes(typeof args[0]) && typeof args[1] !== "string";
  if (portOnly) {
    args.splice(1, 0, "127.0.0.1");
  }
  this.once("listening", () => {
    const { address, port } = this.address();
    console.error(`loopback listening at http://${address}:${port}`);
  });
  return listen.apply(this, args);
};
