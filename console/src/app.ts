// The console's entry point: loaded by index.html as an ES module.
const root = document.getElementById('app');
if (root !== null) {
  const p = document.createElement('p');
  p.textContent = 'ledgerbot console';
  root.replaceChildren(p);
}
