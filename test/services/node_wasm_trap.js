// node_wasm_trap.js - WebAssembly loads out of bounds, each caught: V8 bounds
// checks a wasm memory with guard pages, so each such load is a SIGSEGV that
// node's trap handler turns into a RuntimeError. Prints "traps N in-bounds V".
// The module: (memory 1) (func (export "ld") (param i32) (result i32)
//   local.get 0 i32.load)
const bytes = new Uint8Array([
  0, 97, 115, 109, 1, 0, 0, 0, // magic, version
  1, 6, 1, 96, 1, 127, 1, 127, // type: (i32) -> i32
  3, 2, 1, 0, // function 0 has type 0
  5, 3, 1, 0, 1, // memory: min 1 page
  7, 6, 1, 2, 108, 100, 0, 0, // export "ld" = function 0
  10, 9, 1, 7, 0, 32, 0, 40, 2, 0, 11, // code: local.get 0, i32.load
]);
const n = Number(process.argv[2] || 5);
const m = new WebAssembly.Instance(new WebAssembly.Module(bytes));
let traps = 0;
for (let i = 0; i < n; i++) {
  try {
    m.exports.ld(1 << 30);
  } catch (e) {
    if (e instanceof WebAssembly.RuntimeError) traps++;
  }
}
console.log('traps', traps, 'in-bounds', m.exports.ld(0));
