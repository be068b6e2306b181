/** Turkish strings: members of an encrypted folder, links to encrypted files; the type makes a missing key a compile error. */
import type { vaultSharing as en } from '../en/vault-sharing';

export const vaultSharing: Record<keyof typeof en, string> = {
  'vault.members': 'Üyeler…',
  'vault.members.title': '“{name}” üyeleri',
  'vault.members.new_reads': 'Eklediğiniz kişi bundan sonra eklenen dosyaları okuyabilir. Klasörde zaten olan dosyalar ona kapalı kalır.',
  'vault.members.removed_keeps': 'Çıkardığınız kişi klasörü artık açamaz, ama daha önce indirdiği ya da kopyaladığı her şey onda kalır.',
  'vault.members.current': 'Üyeler',
  'vault.members.owner': 'sahibi',
  'vault.members.new': 'yeni',
  'vault.members.add': 'Kişi ekle',
  'vault.members.search': 'Kasası olan birinin adı',
  'vault.members.found': 'Kasası olan kişiler',
  'vault.members.none_found': 'Eşleşen, kasası olan kimse yok.',
  'vault.members.owner_only': 'Üyeleri yalnızca sahibi ({owner}) değiştirebilir.',
  'vault.members.saved': 'Üyeler kaydedildi. Bundan sonra eklenen dosyalar yeni anahtarı kullanır.',
  'vault.members.no_vault': '{name} kişisinin artık kasası yok: kaydetmek için onu çıkarın.',
  'share.vault.intro': 'Bu dosya şifreli. Bağlantısı dosyanın anahtarını taşır; sunucu dosyayı okuyamadan iletir.',
  'share.vault.key_in_link':
    'Bu dosyanın anahtarı bağlantının içinde: bağlantının tamamına sahip olan herkes dosyayı okuyabilir. Yalnızca ilgili kişilere gönderin.',
};
