import { humanevoBattery } from './tamper_humanevo.ts';

// The Java tamper battery on a HumanEvo Java task, Kubernetes backend (tamper_humanevo.ts).
humanevoBattery('kubernetes');
