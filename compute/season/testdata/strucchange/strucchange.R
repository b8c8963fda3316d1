# strucchange.R: the reference of compute/season's MOSUM monitoring, from
# R's strucchange (mefp, monitor: what bfastmonitor is built on), on 150
# sample series with gaps, breaks of every size and none, 1 to 3
# harmonics with and without a trend, windows h = 0.25, 0.5, 1 and levels
# 0.01 to 0.05. Each series is monitored as bfastmonitor monitors it
# (history = "all" before the start, type = "OLS-MOSUM", period = end):
# the harmonic regressors built from the decimal dates, missing values
# dropped (na.omit), mefp on the history, monitor over history and
# monitoring, the break's date, the magnitude (the median residual over the
# monitoring period) and the largest |MOSUM| / boundary.
#
#   Rscript strucchange.R [OUTDIR]   writes OUTDIR/series.csv and OUTDIR/results.csv
#
# The Go test (compute/season/strucchange_test.go) compares Canopy with the
# committed output, and runs this script again to check that the committed
# output is what strucchange says.
suppressPackageStartupMessages(library(strucchange))
args <- commandArgs(trailingOnly = TRUE)
out <- if (length(args) > 0) args[1] else "."
set.seed(20261202)
series <- list()
results <- list()
for (id in 1:150) {
  years <- sample(4:7, 1)
  per <- sample(c(12, 23, 36), 1)          # dates a year
  n <- years * per
  t <- 2015 + sort(runif(n, 0, years))
  while (any(diff(t) <= 1e-6)) t <- 2015 + sort(runif(n, 0, years))
  hist_years <- years - sample(1:2, 1)
  start <- 2015 + hist_years
  order <- sample(1:3, 1)
  trend <- runif(1) < 0.5
  h <- sample(c(0.25, 0.5, 1), 1)
  level <- sample(c(0.05, 0.025, 0.01), 1)
  end <- 10
  amp <- runif(1, 0.05, 0.3)
  noise <- runif(1, 0.01, 0.06)
  y <- 0.5 + amp * cos(2 * pi * (t - runif(1))) + 0.3 * amp * sin(4 * pi * t) +
    rnorm(1, 0, 0.02) * (t - 2015) + rnorm(n, 0, noise)
  if (id %% 3 != 0) {                      # two series in three break
    at <- start + runif(1, 0, years - hist_years)
    y[t >= at] <- y[t >= at] - runif(1, 0, 0.4)
  }
  y[runif(n) < runif(1, 0, 0.4)] <- NA
  # The values as float32 (Canopy's cubes): R computes with the same numbers.
  y <- readBin(writeBin(y, raw(), size = 4), "double", size = 4, n = n)
  series[[id]] <- data.frame(id = id, time = sprintf("%.17g", t), value = ifelse(is.na(y), "NA", sprintf("%.9g", y)))
  # As bfastpp: the regressors over every date, then na.omit.
  d <- data.frame(time = t, response = y)
  d$trend <- t - mean(t[t < start])
  harmon <- outer(2 * pi * t, 1:order)
  d$harmon <- cbind(apply(harmon, 2, cos), apply(harmon, 2, sin))
  d <- na.omit(d)
  hist <- subset(d, time < start)
  f <- if (trend) response ~ trend + harmon else response ~ harmon
  k <- 1 + 2 * order + trend
  brk <- NA; conf <- NA; mag <- NA; ok <- FALSE
  nh <- nrow(hist)
  if (floor(h * nh) > 1 && nh > k) {
    ok <- TRUE
    m <- mefp(f, data = hist, type = "OLS-MOSUM", h = h, alpha = level, period = end)
    mon <- monitor(m, data = d, verbose = FALSE)
    if (!is.na(mon$breakpoint)) brk <- d$time[mon$breakpoint]
    b <- mon$border((mon$histsize + 1):nrow(d))
    conf <- max(abs(mon$process) / b)
    fit <- lm(f, data = hist)
    newd <- subset(d, time >= start)
    mag <- median(newd$response - predict(fit, newdata = newd))
  }
  results[[id]] <- data.frame(id = id, order = order, trend = as.integer(trend), h = h, level = level,
    end = end, start = sprintf("%.17g", start), history = nh, ok = as.integer(ok),
    break_time = ifelse(is.na(brk), "NA", sprintf("%.17g", brk)),
    magnitude = ifelse(is.na(mag), "NA", sprintf("%.17g", mag)),
    confidence = ifelse(is.na(conf), "NA", sprintf("%.17g", conf)))
}
write.csv(do.call(rbind, series), file.path(out, "series.csv"), row.names = FALSE, quote = FALSE)
write.csv(do.call(rbind, results), file.path(out, "results.csv"), row.names = FALSE, quote = FALSE)
