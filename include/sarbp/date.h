/* sarbp/date.h - checking UTC dates and times (CPHD CollectionStart, SICD
 * CollectStart, form --collect-start). */
#ifndef SARBP_DATE_H
#define SARBP_DATE_H

#ifdef __cplusplus
extern "C" {
#endif

/* Whether s is a UTC date and time as CPHD and SICD write them:
 * YYYY-MM-DDThh:mm:ss, then optionally '.' and one or more digits of
 * fractional seconds, then optionally 'Z', nothing else. A real calendar
 * date and time: year 0001 to 9999, month 01 to 12, a day within the month
 * (29 February in Gregorian leap years only), hour 00 to 23, minute 00 to
 * 59, second 00 to 60 (a leap second). Returns 1 when valid; 0 when not,
 * with *why (when why is not NULL) a static description of the first fault
 * ("the month is not 01 to 12"). Thread-safe; s is not kept. */
int sarbp_date_check(const char *s, const char **why);

#ifdef __cplusplus
}
#endif

#endif
