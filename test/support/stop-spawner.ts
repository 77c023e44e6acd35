/**
 * Each test file loads its own copy of the modules, so each that starts a command through the
 * worker's helper (`src/worker/spawner.ts`) gets a helper of its own: stop it with the file
 * rather than leave it for its idle minute beside the next files.
 */
import { stopSpawner } from '../../src/worker/spawner';

afterAll(() => stopSpawner());
