import { swebenchBattery } from './tamper_swebench.ts';

// The Java tamper battery on the SWE-bench-java fixture, local backend (tamper_swebench.ts).
swebenchBattery('local');
