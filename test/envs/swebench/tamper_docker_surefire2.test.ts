import { swebenchBattery } from './tamper_swebench.ts';

// The Java tamper battery on the SWE-bench-java fixture, Docker backend, Surefire 2.x (tamper_swebench.ts).
swebenchBattery('docker', ['2']);
