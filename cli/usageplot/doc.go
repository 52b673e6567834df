// Package usageplot draws sharqctl report usage --plot: GPUs in use per
// share over time (gonum/plot), as an SVG or PNG image.
//
// It is a package of its own so that only sharqctl links gonum/plot and its
// fonts: the other client commands (qsub above all, run in shell loops)
// would otherwise parse the embedded fonts at every start. cmd/sharqctl
// hands Write to package cli as Sys.PlotUsage.
package usageplot
