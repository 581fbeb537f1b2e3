// The one table model of BenchRouter's output: named columns and rows of typed cells. Read commands and the
// dashboard build these; cli/table-export.ts turns them into a table, JSON, CSV, Markdown or an XLSX workbook.

/** A cell keeps its type to the end: numbers stay numbers in JSON and spreadsheets, null is missing. */
export type TableCell = string | number | boolean | null;

export interface TableView {
  /** Names the table: the XLSX sheet, the heading where several are shown, the `table` column of a joined CSV. */
  name: string;
  columns: string[];
  rows: TableCell[][];
  /** Columns a spreadsheet shows as percentages (their cells are ratios: 0.25 shows as 25.00%). */
  percentColumns?: string[];
}
