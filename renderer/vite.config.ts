import { defineConfig } from 'vite';
import react from '@vitejs/plugin-react';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('.', import.meta.url));

// The server serves dist/renderer at `/` with an SPA fallback; `FILEDOCK_API`
// lets `vite dev` proxy the API to a running server.
export default defineConfig({
  root,
  base: '/',
  plugins: [react()],
  build: {
    outDir: '../dist/renderer',
    emptyOutDir: true,
    target: 'es2022',
    sourcemap: false,
    reportCompressedSize: true,
    // The Mermaid renderer is a page of its own, shown in a sandboxed frame (files/mermaid/);
    // the public page of an app link is another (apps/public/, served at /s/{token} for app links);
    // vault-link.html only carries the decrypting script of an encrypted file's link page (src/vault-link/).
    // The vault's stream worker keeps one unhashed address inside the scope it serves (/vault-stream/).
    rollupOptions: {
      input: {
        index: `${root}index.html`,
        'mermaid-frame': `${root}mermaid-frame.html`,
        'app-page': `${root}app-page.html`,
        'vault-link': `${root}vault-link.html`,
        'vault-stream/sw': `${root}src/vault-sw/sw.ts`,
      },
      output: {
        entryFileNames: (chunk) => (chunk.name === 'vault-stream/sw' ? 'vault-stream/sw.js' : 'assets/[name]-[hash].js'),
      },
    },
  },
  server: {
    proxy: process.env.FILEDOCK_API ? { '/api': process.env.FILEDOCK_API, '/s/': process.env.FILEDOCK_API, '/d/': process.env.FILEDOCK_API } : undefined,
  },
});
