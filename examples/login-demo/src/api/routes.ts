export const routes = [
  { method: 'GET', path: '/health' },
  { method: 'POST', path: '/orders' },
];
