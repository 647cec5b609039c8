import { tamperBattery } from './tamper_suite.ts';

tamperBattery('2', 'local');
