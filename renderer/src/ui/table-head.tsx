/** The head row of a table whose last column holds each row's buttons (named for screen readers only). */
import type { ReactNode } from 'react';
import { useI18n } from '../i18n';

export function ActionsTableHead({ columns }: { columns: ReactNode[] }) {
  const { t } = useI18n();
  return (
    <thead>
      <tr>
        {columns.map((c, i) => (
          <th key={i} scope="col">
            {c}
          </th>
        ))}
        <th scope="col">
          <span className="sr-only">{t('files.actions', { name: '' })}</span>
        </th>
      </tr>
    </thead>
  );
}
