import { swebenchBattery } from './tamper_swebench.ts';

// The Java tamper battery on the SWE-bench-java fixture, Docker backend, Surefire 3.x (tamper_swebench.ts);
// 2.x in tamper_docker_surefire2.test.ts, so that each file stays well within one file's time limit.
swebenchBattery('docker', ['3']);
