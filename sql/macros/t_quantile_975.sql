-- The 97.5 % quantile of Student's t distribution with df degrees of freedom: the factor of a two-sided
-- 95 % confidence interval from a standard error (soak_drift's slopes). DuckDB has no t distribution: a
-- table to six decimals up to df 30, beyond it the Cornish-Fisher expansion around the normal quantile
-- (within 2e-6 of the exact value for df > 30). NULL for df < 1.
-- upstream: none
create or replace temp macro t_quantile_975(df) as
    case
        when df < 1 then null
        when df <= 30 then [12.706205, 4.302653, 3.182446, 2.776445, 2.570582, 2.446912, 2.364624, 2.306004,
                            2.262157, 2.228139, 2.200985, 2.178813, 2.160369, 2.144787, 2.131450, 2.119905,
                            2.109816, 2.100922, 2.093024, 2.085963, 2.079614, 2.073873, 2.068658, 2.063899,
                            2.059539, 2.055529, 2.051831, 2.048407, 2.045230, 2.042272][df::integer]
        else 1.959963985
            + (1.959963985 ^ 3 + 1.959963985) / (4 * df)
            + (5 * 1.959963985 ^ 5 + 16 * 1.959963985 ^ 3 + 3 * 1.959963985) / (96 * df ^ 2)
            + (3 * 1.959963985 ^ 7 + 19 * 1.959963985 ^ 5 + 17 * 1.959963985 ^ 3 - 15 * 1.959963985) / (384 * df ^ 3)
    end;
