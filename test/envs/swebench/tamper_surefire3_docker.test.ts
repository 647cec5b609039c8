import { tamperBattery } from './tamper_suite.ts';

tamperBattery('3', 'docker');
