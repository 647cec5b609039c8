import { swebenchBattery } from './tamper_swebench.ts';

// The Java tamper battery on the SWE-bench-java fixture, Kubernetes backend, Surefire 3.x (tamper_swebench.ts);
// 2.x in tamper_kubernetes_surefire2.test.ts: a pod per scoring makes both in one file too long for one file's limit.
swebenchBattery('kubernetes', ['3']);
