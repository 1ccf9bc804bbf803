// The console's build: served by the API process at /console (src/modules/console-app/), so every
// asset URL starts with /console/ and hashed names may be cached for ever.
import { fileURLToPath } from 'node:url';
import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

export default defineConfig({
  base: '/console/',
  plugins: [react()],
  resolve: {
    // The SDK's TypeScript source, not its dist/: one build step, and the workspace's own copy.
    alias: { '@tidings/sdk': fileURLToPath(new URL('../sdk/src/index.ts', import.meta.url)) },
  },
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    target: 'es2022',
    // No inline scripts or data: URLs in the page: the CSP allows scripts from 'self' only.
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
  },
});
