/** This package's version, sent in the user agent (checked against package.json by the tests). */
export const VERSION = '0.1.0';
