import { tamperBattery } from './tamper_suite.ts';

tamperBattery('docker');
