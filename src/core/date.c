/* date.c - UTC dates and times checked as dates (sarbp/date.h).
 *
 * Only the shape CPHD and SICD use (xs:dateTime in UTC, no zone offset) is
 * accepted, and every field must name a real instant: a file's
 * "9999-99-99T99:99:99Z" or a user's "0000-00-00T00:00:00Z" is refused
 * before it can reach a SICD. */
#include "sarbp/date.h"

#include <stddef.h>

/* The value of the n digits at s, or -1 when one is not a digit. */
static int digits(const char *s, int n)
{
    int v = 0;
    for (int i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9') return -1;
        v = v * 10 + (s[i] - '0');
    }
    return v;
}

static int leap(int y)
{
    return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

static int fail(const char **why, const char *reason)
{
    if (why) *why = reason;
    return 0;
}

int sarbp_date_check(const char *s, const char **why)
{
    static const char shape[] = "dddd-dd-ddTdd:dd:dd";
    static const int days[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    if (!s) return fail(why, "there is none");
    for (size_t i = 0; i < sizeof shape - 1; i++) {
        const int ok = shape[i] == 'd' ? s[i] >= '0' && s[i] <= '9' : s[i] == shape[i];
        if (!ok) return fail(why, "it is not of the form YYYY-MM-DDThh:mm:ss[.fff][Z]");
    }
    const int year = digits(s, 4), month = digits(s + 5, 2), day = digits(s + 8, 2);
    const int hour = digits(s + 11, 2), minute = digits(s + 14, 2), second = digits(s + 17, 2);
    const char *r = s + sizeof shape - 1;
    if (*r == '.') {
        if (r[1] < '0' || r[1] > '9')
            return fail(why, "its fractional seconds have no digits");
        for (r++; *r >= '0' && *r <= '9'; r++) {}
    }
    if (*r == 'Z') r++;
    if (*r) return fail(why, "it is not of the form YYYY-MM-DDThh:mm:ss[.fff][Z]");
    if (year < 1) return fail(why, "the year is not 0001 to 9999");
    if (month < 1 || month > 12) return fail(why, "the month is not 01 to 12");
    const int mdays = days[month - 1] + (month == 2 && leap(year));
    if (day < 1 || day > mdays) return fail(why, "the day is not one of its month");
    if (hour > 23) return fail(why, "the hour is not 00 to 23");
    if (minute > 59) return fail(why, "the minute is not 00 to 59");
    if (second > 60) return fail(why, "the second is not 00 to 60");
    if (why) *why = NULL;
    return 1;
}
