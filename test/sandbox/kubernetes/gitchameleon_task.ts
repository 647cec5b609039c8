/**
 * The GitChameleon problem the kubernetes tests run: jinja2 3.1 on Python 3.10
 * (the nearest base image stands in), a light pin whose env builds in seconds.
 */
export const GITCHAMELEON_TASK = '156';
