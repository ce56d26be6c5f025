-- The 97.5 % quantile of Student's t distribution with df degrees of freedom: the factor of a two-sided
-- 95 % confidence interval from a standard error (soak_drift's slopes). DuckDB has no t distribution: a
-- table to four decimals up to df 30, beyond it the Cornish-Fisher expansion around the normal quantile
-- (within 2e-6 of the exact value for df > 30). NULL for df < 1.
-- upstream: none
create or replace temp macro t_quantile_975(df) as
    case
        when df < 1 then null
        when df <= 30 then [12.7062, 4.3027, 3.1824, 2.7764, 2.5706, 2.4469, 2.3646, 2.3060, 2.2622, 2.2281,
                            2.2010, 2.1788, 2.1604, 2.1448, 2.1314, 2.1199, 2.1098, 2.1009, 2.0930, 2.0860,
                            2.0796, 2.0739, 2.0687, 2.0639, 2.0595, 2.0555, 2.0518, 2.0484, 2.0452, 2.0423][df::integer]
        else 1.959963985
            + (1.959963985 ^ 3 + 1.959963985) / (4 * df)
            + (5 * 1.959963985 ^ 5 + 16 * 1.959963985 ^ 3 + 3 * 1.959963985) / (96 * df ^ 2)
            + (3 * 1.959963985 ^ 7 + 19 * 1.959963985 ^ 5 + 17 * 1.959963985 ^ 3 - 15 * 1.959963985) / (384 * df ^ 3)
    end;
